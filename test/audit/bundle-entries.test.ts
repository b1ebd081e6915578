// The auditor's bundle-leaf rules (src/audit/entries.ts, issue 26): each hashedrekord leaf is paired with the
// attestation whose statement it logs and checked with checkBundleLeaf against the P-256 keys of the served JWKS.

import { describe, expect, it } from 'vitest';
import { checkEntry, createEntryContext, type EntryContext, type EntryKind } from '../../src/audit/entries.ts';
import type { AuditProblemCode } from '../../src/audit/report.ts';
import {
  buildBundleJwksKeys,
  buildJwks,
  buildPublishStatement,
  createBundleSigningKey,
  createSigningKey,
  serializeStatementJcs,
  signBundleEntry,
  signStatement,
} from '../../src/attest/index.ts';
import { computeDigest } from '../../src/core/digest.ts';

const now = Math.floor(Date.now() / 1000);
const jwsKey = createSigningKey();
const bundleKey = createBundleSigningKey();
const served = {
  keys: [
    ...buildJwks([{ kid: jwsKey.kid, publicJwk: jwsKey.publicJwk, notBefore: now - 60, notAfter: null }]).keys,
    ...buildBundleJwksKeys([
      { kid: bundleKey.kid, publicJwk: bundleKey.publicJwk, notBefore: now - 60, notAfter: null },
    ]),
  ],
};

function publish(version: string) {
  const statement = buildPublishStatement({
    name: 'io.github.acme/payments',
    version,
    digest: computeDigest(Buffer.from(version)),
    predicate: {
      registry: 'http://registry.test',
      publisher: 'io.github.acme',
      storedAt: new Date(now * 1000).toISOString(),
      policy: 'p',
      size: 1,
      previousDigest: null,
    },
  });
  const bytes = Buffer.from(serializeStatementJcs(statement), 'utf8');
  return { attestation: new Uint8Array(signStatement(statement, jwsKey)), bytes };
}

async function walk(leaves: Uint8Array[], context: EntryContext) {
  const problems: [AuditProblemCode, string][] = [];
  const kinds: EntryKind[] = [];
  for (const [index, leaf] of leaves.entries()) {
    kinds.push(
      await checkEntry(
        index,
        leaf,
        context,
        (code, message) => problems.push([code, message]),
        async () => undefined,
      ),
    );
  }
  return { problems, kinds };
}

const fresh = () => {
  const { jwks } = {
    jwks: buildJwks([{ kid: jwsKey.kid, publicJwk: jwsKey.publicJwk, notBefore: now - 60, notAfter: null }]),
  };
  const context = createEntryContext([jwsKey.kid], jwks, true, served);
  return context;
};

describe('audit: bundle entries', () => {
  it('accepts each attestation followed (even later, as a backfill) by its bundle leaf', async () => {
    const a = publish('1.0.0');
    const b = publish('1.1.0');
    const leaves = [
      a.attestation,
      b.attestation,
      signBundleEntry(b.bytes, bundleKey).leaf,
      signBundleEntry(a.bytes, bundleKey).leaf,
    ];
    expect(await walk(leaves, fresh())).toEqual({
      problems: [],
      kinds: ['attestation', 'attestation', 'bundle', 'bundle'],
    });
  });

  it('refuses a bundle leaf for no earlier statement, a second one for the same statement, and an unknown key', async () => {
    const a = publish('1.0.0');
    const b = publish('1.1.0');
    const c = publish('1.2.0');
    const leaves = [
      signBundleEntry(a.bytes, bundleKey).leaf,
      a.attestation,
      b.attestation,
      signBundleEntry(b.bytes, bundleKey).leaf,
      signBundleEntry(b.bytes, bundleKey).leaf,
      c.attestation,
      signBundleEntry(c.bytes, createBundleSigningKey()).leaf,
    ];
    const { problems } = await walk(leaves, fresh());
    expect(problems).toEqual([
      ['BUNDLE_ENTRY_INVALID', 'bundle entry 0 logs no statement attested earlier in the log'],
      ['BUNDLE_ENTRY_INVALID', 'bundle entry 4 logs a statement that already has a bundle entry'],
      [
        'UNKNOWN_KEY',
        'bundle entry 6 (io.github.acme/payments@1.2.0): the leaf names a key that is not a published bundle key',
      ],
    ]);
  });

  it('does not count a bundle for an earlier run as a problem when the walk starts mid-log', async () => {
    const a = publish('1.0.0');
    const context = createEntryContext([jwsKey.kid], undefined, false, served);
    expect((await walk([signBundleEntry(a.bytes, bundleKey).leaf], context)).problems).toEqual([]);
  });

  it('counts a malformed hashedrekord leaf as a bundle with BUNDLE_ENTRY_INVALID', async () => {
    const body = Buffer.from('{"apiVersion":"0.0.1","kind":"hashedrekord","spec":{}}');
    expect(await walk([body], fresh())).toEqual({
      problems: [['BUNDLE_ENTRY_INVALID', 'bundle entry 0: the leaf is not a hashedrekord v0.0.2 entry']],
      kinds: ['bundle'],
    });
  });
});
