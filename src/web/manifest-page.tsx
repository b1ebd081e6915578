// GET /ui/manifests/{namespace}/{name} — every version (SemVer 2.0.0 §11 precedence, newest first) with its status
// (a yanked one with its reason), time and digest, and a compare control between any two versions (a plain GET form,
// so it works without JavaScript: GET /ui/diff/{namespace}/{name}?from=&to= redirects to the diff page).

import type { FC } from 'hono/jsx';
import type { Registry, VersionRecord } from '../registry/index.ts';
import { Layout, StatusBadge, Time } from './layout.tsx';
import { comparePath, diffPagePath, versionPagePath } from './paths.ts';

export async function renderManifestPage(registry: Registry, name: string) {
  const versions = (await registry.listVersions(name)).reverse();
  return <ManifestPage name={name} versions={versions} />;
}

const ManifestPage: FC<{ name: string; versions: VersionRecord[] }> = ({ name, versions }) => (
  <Layout title={name}>
    <p class="muted">
      <a href="/">Manifests</a> /
    </p>
    <h1>{name}</h1>
    <h2 id="versions">Versions</h2>
    <div class="table-wrap">
      <table aria-labelledby="versions">
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Status</th>
            <th scope="col">Stored</th>
            <th scope="col">Digest</th>
            <th scope="col">Changes</th>
          </tr>
        </thead>
        <tbody>
          {versions.map((record, index) => (
            <VersionRow name={name} record={record} previous={versions[index + 1]} />
          ))}
        </tbody>
      </table>
    </div>
    {versions.length > 1 && <CompareForm name={name} versions={versions} />}
  </Layout>
);

const VersionRow: FC<{ name: string; record: VersionRecord; previous: VersionRecord | undefined }> = ({
  name,
  record,
  previous,
}) => (
  <tr data-version={record.version}>
    <td>
      <a href={versionPagePath(name, record.version)}>{record.version}</a>
    </td>
    <td>
      <StatusBadge status={record.status} />
      {record.status === 'yanked' && (
        <div class="yank-reason">
          Yanked <Time value={record.yankedAt} />: {record.yankReason}
        </div>
      )}
    </td>
    <td>
      <Time value={record.storedAt} />
    </td>
    <td class="digest mono">{record.digest}</td>
    <td>
      {previous === undefined ? (
        <span class="muted">first version</span>
      ) : (
        <a href={diffPagePath(name, previous.version, record.version)}>since {previous.version}</a>
      )}
    </td>
  </tr>
);

const CompareForm: FC<{ name: string; versions: VersionRecord[] }> = ({ name, versions }) => (
  <section aria-labelledby="compare">
    <h2 id="compare">Compare two versions</h2>
    <form class="compare" method="get" action={comparePath(name)}>
      <label for="from">From</label>
      <select id="from" name="from">
        {versions.map((record, index) => (
          <option value={record.version} selected={index === 1}>
            {record.version}
          </option>
        ))}
      </select>
      <label for="to">to</label>
      <select id="to" name="to">
        {versions.map((record, index) => (
          <option value={record.version} selected={index === 0}>
            {record.version}
          </option>
        ))}
      </select>
      <button type="submit">Compare</button>
    </form>
  </section>
);
