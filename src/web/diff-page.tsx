// GET /ui/diff/{namespace}/{name}/{from}/{to} — what changed between two versions (manifest-diff.ts): the signed
// server's changes first (issue 27 §5: a new remote URL or package identifier is a capability change), then capability
// changes, the widening ones on top (a new host, secret or path, a higher ceiling: the signs of a rug pull), then tool
// by tool every changed field with its RFC 6901 JSON pointer and both values.

import type { FC } from 'hono/jsx';
import type { JsonValue } from '../core/json.ts';
import type { Registry, VersionRecord } from '../registry/index.ts';
import { Layout, StatusBadge } from './layout.tsx';
import {
  type FieldChange,
  type ManifestDiff,
  type ServerChange,
  type ToolDiff,
  diffManifests,
} from './manifest-diff.ts';
import { readManifest } from './page-data.ts';
import { manifestPagePath, versionPagePath } from './paths.ts';

export async function renderDiffPage(registry: Registry, name: string, from: string, to: string) {
  const older = await registry.getManifest(name, from);
  const newer = await registry.getManifest(name, to);
  const before = readManifest(older.bytes);
  const after = readManifest(newer.bytes);
  const diff = diffManifests(before, after);
  const signsServer = before.server !== undefined || after.server !== undefined;
  return <DiffPage name={name} from={older.record} to={newer.record} diff={diff} signsServer={signsServer} />;
}

const DiffPage: FC<{
  name: string;
  from: VersionRecord;
  to: VersionRecord;
  diff: ManifestDiff;
  signsServer: boolean;
}> = ({ name, from, to, diff, signsServer }) => (
  <Layout title={`${name} ${from.version} → ${to.version}`}>
    <p class="muted">
      <a href="/">Manifests</a> / <a href={manifestPagePath(name)}>{name}</a> /
    </p>
    <h1>
      {name}: {from.version} → {to.version}
    </h1>
    <ul class="words">
      <VersionLine name={name} record={from} label="from" />
      <VersionLine name={name} record={to} label="to" />
    </ul>
    {signsServer && <ServerChanges diff={diff} />}
    <CapabilityChanges diff={diff} />
    {diff.manifest.length > 0 && (
      <section aria-labelledby="manifest-changes">
        <h2 id="manifest-changes">Manifest</h2>
        <ChangeTable changes={diff.manifest} />
      </section>
    )}
    <section aria-labelledby="tool-changes">
      <h2 id="tool-changes">Tools</h2>
      {diff.tools.map((tool) => (
        <ToolChanges tool={tool} />
      ))}
    </section>
  </Layout>
);

const VersionLine: FC<{ name: string; record: VersionRecord; label: string }> = ({ name, record, label }) => (
  <li>
    {label} <a href={versionPagePath(name, record.version)}>{record.version}</a> <StatusBadge status={record.status} />{' '}
    <span class="digest mono">{record.digest}</span>
    {record.status === 'yanked' && <span> — yanked: {record.yankReason}</span>}
  </li>
);

const SERVER_WORDS: Record<ServerChange['direction'], string> = {
  wider: 'Wider',
  changed: 'Changed',
  narrower: 'Narrower',
};

/** Which server the signature names, and how that changed: before everything else (vendor URLs as escaped text). */
const ServerChanges: FC<{ diff: ManifestDiff }> = ({ diff }) => (
  <section aria-labelledby="server-changes" data-section="server">
    <h2 id="server-changes">Signed server</h2>
    {diff.server.length === 0 ? (
      <p>No change to the signed server: the same packages and remotes.</p>
    ) : (
      <ul class="capability-changes">
        {diff.server.map((change) => (
          <li class={change.direction} data-direction={change.direction}>
            <strong>{SERVER_WORDS[change.direction]}</strong> — {change.text}{' '}
            <code class="muted">{change.pointer}</code>
          </li>
        ))}
      </ul>
    )}
    {diff.serverFields.length > 0 && <ChangeTable changes={diff.serverFields} />}
  </section>
);

const CapabilityChanges: FC<{ diff: ManifestDiff }> = ({ diff }) => (
  <section aria-labelledby="capability-changes" data-section="capabilities">
    <h2 id="capability-changes">Capability changes</h2>
    {diff.capabilities.length === 0 ? (
      <p>No capability changes: every tool may touch what it could before.</p>
    ) : (
      <ul class="capability-changes">
        {diff.capabilities.map((change) => (
          <li class={change.direction} data-direction={change.direction}>
            <strong>{change.direction === 'wider' ? 'Wider' : 'Narrower'}</strong> —{' '}
            <span class="tool-name">{change.tool}</span>: {change.text} <code class="muted">{change.pointer}</code>
          </li>
        ))}
      </ul>
    )}
  </section>
);

const KIND_WORDS: Record<ToolDiff['kind'], string> = {
  added: 'added',
  removed: 'removed',
  changed: 'changed',
  unchanged: 'unchanged',
};

const ToolChanges: FC<{ tool: ToolDiff }> = ({ tool }) => (
  <article class="tool" data-tool-diff={tool.kind}>
    <h3>
      <span class="tool-name">{tool.name}</span> <span class={`kind-${tool.kind}`}>{KIND_WORDS[tool.kind]}</span>{' '}
      <code class="muted">{tool.pointer}</code>
    </h3>
    {tool.changes.length > 0 && <ChangeTable changes={tool.changes} />}
  </article>
);

function showValue(value: JsonValue | undefined): string {
  return value === undefined ? '(absent)' : JSON.stringify(value, null, 2);
}

const ChangeTable: FC<{ changes: FieldChange[] }> = ({ changes }) => (
  <div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((change) => (
          <tr data-pointer={change.pointer}>
            <td>
              <code class="mono">{change.pointer}</code>
            </td>
            <td>
              <pre class="change-value">{showValue(change.before)}</pre>
            </td>
            <td>
              <pre class="change-value">{showValue(change.after)}</pre>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);
