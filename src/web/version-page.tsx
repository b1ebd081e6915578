// GET /ui/manifests/{namespace}/{name}/{version} — the manifest as a person reads it: each tool (tool-view.tsx), what
// the attestation says (publisher, stored at, key id, log index), and the "Verified in this browser" panel that
// assets/verify.js fills in by checking everything itself with WebCrypto (nothing the page says is trusted there):
// the JWS attestation's checks, then the Sigstore bundle's (issue 26 §3, assets/verify-bundle.js).

import type { FC } from 'hono/jsx';
import type { WitnessKeyView } from '../http/app-env.ts';
import type { Manifest, ManifestServer } from '../pipeline/index.ts';
import { attestationPath, bundlePath, versionPath } from '../protocol/routes.ts';
import type { Registry, VersionRecord } from '../registry/index.ts';
import { Layout, StatusBadge, Time } from './layout.tsx';
import { type AttestationClaims, readAttestationClaims, readManifest } from './page-data.ts';
import { manifestPagePath } from './paths.ts';
import { ToolView } from './tool-view.tsx';

/** The checks the browser runs, in its order (ids are what assets/verify.js reports on). */
export const VERIFY_CHECKS: readonly { id: string; label: string }[] = [
  { id: 'signature', label: 'The attestation is signed (Ed25519) by the registry key its kid names' },
  { id: 'subject', label: 'The attestation is for this name@version, and the bytes declare the same' },
  { id: 'digest', label: 'The SHA-256 of the bytes is the digest the attestation covers' },
  { id: 'key-window', label: 'The key was valid when the registry stored the manifest (storedAt)' },
  { id: 'checkpoint', label: 'The log checkpoint is signed by the log key (C2SP signed note)' },
  { id: 'inclusion', label: 'The attestation is in the log: its inclusion proof leads to the checkpoint root' },
];

/** The Sigstore bundle's checks, in the browser's order (ids are what assets/verify-bundle.js reports on). */
export const BUNDLE_VERIFY_CHECKS: readonly { id: string; label: string }[] = [
  { id: 'bundle-signature', label: 'Envelope signature: DSSE signed (ECDSA P-256) by the bundle key its hint names' },
  { id: 'bundle-statement', label: "Statement matches: the JWS's statement, for this name@version and these bytes" },
  { id: 'bundle-key-window', label: "Key window: the key was valid at the log's signed integration time" },
  { id: 'bundle-log-entry', label: 'Log entry: the hashedrekord body is the one rebuilt here, in this log' },
  { id: 'bundle-checkpoint', label: "Checkpoint: the bundle's checkpoint is signed by the log key" },
  { id: 'bundle-inclusion', label: 'Inclusion: its proof leads from the rebuilt entry to that checkpoint root' },
];

interface VersionView {
  record: VersionRecord;
  manifest: Manifest;
  size: number;
  claims: AttestationClaims;
}

export async function renderVersionPage(
  registry: Registry,
  name: string,
  version: string,
  witnesses: readonly WitnessKeyView[] = [],
) {
  const stored = await registry.getManifest(name, version);
  const view: VersionView = {
    record: stored.record,
    manifest: readManifest(stored.bytes),
    size: stored.bytes.byteLength,
    claims: readAttestationClaims(stored.record.attestation),
  };
  return <VersionPage view={view} witnesses={witnesses} />;
}

const VersionPage: FC<{ view: VersionView; witnesses: readonly WitnessKeyView[] }> = ({ view, witnesses }) => {
  const { record, manifest } = view;
  return (
    <Layout title={`${record.name}@${record.version}`} scripts={['verify.js']}>
      <p class="muted">
        <a href="/">Manifests</a> / <a href={manifestPagePath(record.name)}>{record.name}</a> /
      </p>
      <h1>
        {record.name}@{record.version} <StatusBadge status={record.status} />
      </h1>
      {record.status === 'yanked' && (
        <p class="notice yanked" data-testid="yank-notice">
          <strong>Yanked</strong> <Time value={record.yankedAt} />: {record.yankReason}
        </p>
      )}
      {manifest.description !== undefined && <p class="description">{manifest.description}</p>}
      <VerifyPanel witnesses={witnesses} />
      {manifest.server !== undefined && <SignedServer server={manifest.server} />}
      <h2 id="tools">{manifest.tools.length === 1 ? '1 tool' : `${manifest.tools.length} tools`}</h2>
      {manifest.tools.map((tool, index) => (
        <ToolView tool={tool} index={index} />
      ))}
      <AttestationFacts view={view} />
    </Layout>
  );
};

/**
 * The signed `server` member (issue 27 §5): which packages and remotes the signature names, and the repository. Vendor
 * URLs are shown as text, never as links (a page never follows what a vendor wrote).
 */
const SignedServer: FC<{ server: ManifestServer }> = ({ server }) => (
  <section aria-labelledby="server" data-testid="signed-server">
    <h2 id="server">Signed server{server.title === undefined ? '' : `: ${server.title}`}</h2>
    {(server.packages ?? []).length > 0 && (
      <table>
        <thead>
          <tr>
            <th>package</th>
            <th>registry</th>
            <th>version</th>
            <th>transport</th>
          </tr>
        </thead>
        <tbody>
          {(server.packages ?? []).map((pkg) => (
            <tr>
              <td>
                <code>{pkg.identifier}</code>
              </td>
              <td>{pkg.registryType}</td>
              <td>{pkg.version ?? ''}</td>
              <td>{pkg.transport.type}</td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    {(server.remotes ?? []).length > 0 && (
      <ul>
        {(server.remotes ?? []).map((remote) => (
          <li>
            remote ({remote.type}): <code>{remote.url}</code>
          </li>
        ))}
      </ul>
    )}
    {server.repository !== undefined && (
      <p>
        repository ({server.repository.source}): <code>{server.repository.url}</code>
      </p>
    )}
  </section>
);

/**
 * `witnesses` (name and vkey, as text in a data attribute, escaped by hono/jsx): the panel verifies each cosignature
 * by one of them on the checkpoint (C2SP tlog-cosignature) and lists it under the checks.
 */
const VerifyPanel: FC<{ witnesses: readonly WitnessKeyView[] }> = ({ witnesses }) => (
  <section
    class="verify"
    id="verify"
    data-verify=""
    data-state="pending"
    data-witnesses={witnesses.map((w) => `${w.name} ${w.vkey}`).join('\n')}
    aria-labelledby="verify-title"
  >
    <h2 id="verify-title">Verified in this browser</h2>
    <p class="muted">
      This browser fetches the exact bytes, the attestation, the Sigstore bundle, the registry's keys, the log
      checkpoint, the log key and an inclusion proof from the API, and checks them itself (WebCrypto Ed25519, ECDSA
      P-256 and SHA-256).
    </p>
    <p class="summary" data-verify-summary="" aria-live="polite">
      Not checked yet: the checks run in this browser with JavaScript.
    </p>
    <h3>JWS attestation</h3>
    <CheckList checks={VERIFY_CHECKS} />
    <h3>Sigstore bundle</h3>
    <CheckList checks={BUNDLE_VERIFY_CHECKS} />
    {witnesses.length > 0 && (
      <>
        <h3>Witness cosignatures</h3>
        <ul class="cosignatures" data-cosignatures="">
          <li class="muted">Not checked yet.</li>
        </ul>
      </>
    )}
    <noscript>
      <p>
        JavaScript is off, so nothing was checked here. From a terminal:{' '}
        <code>toolseal verify NAME@VERSION --registry URL</code>.
      </p>
    </noscript>
  </section>
);

const CheckList: FC<{ checks: readonly { id: string; label: string }[] }> = ({ checks }) => (
  <ol class="checks">
    {checks.map((check) => (
      <li data-check={check.id} data-state="pending">
        <span class="state">pending</span>
        <span class="label">{check.label}</span>
        <span class="reason" />
      </li>
    ))}
  </ol>
);

const AttestationFacts: FC<{ view: VersionView }> = ({ view }) => {
  const { record, claims, size } = view;
  return (
    <section aria-labelledby="attestation">
      <h2 id="attestation">Attestation</h2>
      <p class="muted">What the registry's attestation says; the panel above is what this browser proved.</p>
      <dl class="facts">
        <dt>Digest</dt>
        <dd class="digest mono">{record.digest}</dd>
        <dt>Size</dt>
        <dd>{size} bytes (canonical JSON)</dd>
        <dt>Publisher</dt>
        <dd>{claims.publisher ?? '–'}</dd>
        <dt>Provenance</dt>
        <dd class="provenance">{claims.provenance ?? 'not recorded'}</dd>
        <dt>Stored at</dt>
        <dd>
          <Time value={claims.storedAt ?? record.storedAt} />
        </dd>
        <dt>Key id</dt>
        <dd class="mono">{claims.kid ?? record.kid}</dd>
        <dt>Log index</dt>
        <dd>{record.logIndex}</dd>
        <dt>Registry</dt>
        <dd class="mono">{claims.registry ?? '–'}</dd>
        <dt>Previous digest</dt>
        <dd class="digest mono">{claims.previousDigest ?? 'none (first version)'}</dd>
        <dt>Raw</dt>
        <dd>
          <a href={versionPath(record.name, record.version)}>bytes</a>,{' '}
          <a href={attestationPath(record.name, record.version)}>attestation</a>,{' '}
          <a href={bundlePath(record.name, record.version)}>Sigstore bundle</a>
        </dd>
      </dl>
    </section>
  );
};
