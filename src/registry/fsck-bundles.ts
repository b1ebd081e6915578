// fsck of the Sigstore bundles (issue 26, docs/sigstore.md): each stored bundle points at a `bundle` leaf that
// checkBundleLeaf accepts for its version's statement (the JWS payload), signed by a bundle key of the keys folder valid
// at its integratedTime, and its stored envelope is the one that leaf logs. A version without a bundle is no problem
// (the next start gives it one).

import { buildBundleJwksKeys, type BundleKeyValidity, type DsseEnvelope } from '../attest/index.ts';
import { decodeBase64Strict, equalBytes } from '../core/bytes.ts';
import { describeError } from '../core/errors.ts';
import { checkBundleLeaf } from '../log/bundle-leaf.ts';
import type { BundleRecord, LogEntryRecord, VersionRecord } from '../store/index.ts';
import { readAttestedStatement } from './sigstore-bundles.ts';

/** Where a problem is reported (fsck.ts's report: the codes are a subset of FsckProblem's). */
export type BundleProblemSink = (
  code: 'INTEGRITY_ERROR' | 'SIGNATURE_INVALID' | 'NOT_IN_LOG',
  where: string,
  message: string,
) => void;

/**
 * Check every bundle; `bundleKeys` (the keys folder's list) enables the key and signature checks, without it only
 * the leaf's place and form and the envelope are checked. Returns how many bundles were checked.
 */
export function checkBundles(
  rows: { bundles: BundleRecord[]; versions: VersionRecord[]; entries: LogEntryRecord[] },
  bundleKeys: readonly BundleKeyValidity[] | undefined,
  report: BundleProblemSink,
): number {
  const versions = new Map(rows.versions.map((version) => [version.id, version]));
  const jwks = bundleKeys === undefined ? undefined : buildBundleJwksKeys(bundleKeys);
  for (const bundle of rows.bundles) {
    const version = versions.get(bundle.versionId);
    const where = version ? `${version.name}@${version.version} bundle` : `bundle of version ${bundle.versionId}`;
    if (!version) {
      report('INTEGRITY_ERROR', where, 'names no stored version');
      continue;
    }
    const entry = rows.entries[bundle.logIndex];
    if (entry?.kind !== 'bundle') {
      report('NOT_IN_LOG', where, `log entry ${bundle.logIndex} is not a bundle leaf`);
      continue;
    }
    try {
      const statement = readAttestedStatement(version.attestation);
      const envelope = JSON.parse(bundle.envelope) as DsseEnvelope;
      const payload = decodeBase64Strict(envelope.payload ?? '');
      if (!payload || !equalBytes(payload, statement) || envelope.signatures?.[0]?.keyid !== bundle.kid) {
        report('SIGNATURE_INVALID', where, 'the envelope does not carry this version’s statement under its kid');
        continue;
      }
      if (jwks === undefined) continue;
      const check = checkBundleLeaf({ leaf: entry.data, statement, bundleKeys: jwks, at: bundle.integratedTime });
      if (!check.ok) {
        report(check.code === 'BUNDLE_ENTRY_INVALID' ? 'NOT_IN_LOG' : 'SIGNATURE_INVALID', where, check.message);
      } else if (
        check.kid !== bundle.kid ||
        !equalBytes(decodeBase64Strict(envelope.signatures[0].sig) ?? new Uint8Array(), check.facts.signature)
      ) {
        report('SIGNATURE_INVALID', where, 'the envelope is not the one its leaf logs');
      }
    } catch (error) {
      report('INTEGRITY_ERROR', where, describeError(error));
    }
  }
  return rows.bundles.length;
}
