// The auditor (src/audit/) against a live registry: passes on an honest log, remembers O(log n) state,
// and catches rewritten entries, rewritten bytes, rollbacks and forks, bad keys and malformed entries.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolsealError } from '../../src/core/errors.ts';
import { canonicalizeToBytes, computeDigest, type JsonValue } from '../../src/pipeline/index.ts';
import { buildPublishStatement, signStatement, type Jwks } from '../../src/attest/index.ts';
import {
  auditWithStateFile,
  formatAuditState,
  frontierLength,
  parseAuditState,
  runAudit,
  type AuditOptions,
  type AuditReport,
  type AuditState,
} from '../../src/audit/index.ts';
import {
  dropTriggers,
  manifestBytes,
  publishMany,
  sql,
  startTestRegistry,
  truncateLog,
  type TestRegistry,
} from '../log-e2e/helpers.ts';
import { generateSigningKey } from '../../src/keys/key-files.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

let t: TestRegistry;

beforeEach(async () => {
  t = await startTestRegistry();
});

afterEach(async () => {
  await t.close();
});

function codes(report: AuditReport): string[] {
  return [...new Set(report.problems.map((p) => p.code))].sort();
}

async function auditOnce(state?: AuditState, extra: Partial<AuditOptions> = {}): ReturnType<typeof runAudit> {
  return runAudit({ registry: t.url, ...(state ? { state } : {}), ...extra });
}

async function passingState(): Promise<AuditState> {
  const { report, nextState } = await auditOnce();
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
  return nextState!;
}

/** A fetch that answers some paths itself (a lying registry or a man in the middle). */
function proxyFetch(rewrite: (path: string, response: Response) => Promise<Response> | Response): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    return rewrite(new URL(String(input)).pathname, response);
  };
}

describe('state files', () => {
  it('a state file must hold a frontier that folds to its root', async () => {
    await publishMany(t, 's', 4);
    const state = await passingState();
    expect(state.size).toBe(9); // a key, then an attestation and a bundle leaf per publish
    expect(state.frontier).toHaveLength(2);
    expect(parseAuditState(formatAuditState(state))).toEqual(state);
    const refuse = (text: string): string | undefined => {
      try {
        parseAuditState(text);
        return undefined;
      } catch (error) {
        return (error as ToolsealError).code;
      }
    };
    expect(refuse(formatAuditState({ ...state, frontier: [state.frontier[1]!, state.frontier[0]!] }))).toBe(
      'BAD_REQUEST',
    );
    expect(refuse(formatAuditState({ ...state, frontier: [state.frontier[0]!] }))).toBe('BAD_REQUEST');
    expect(refuse(formatAuditState({ ...state, size: 10 }))).toBe('BAD_REQUEST');
    expect(refuse(formatAuditState({ ...state, logKey: 'nope' }))).toBe('BAD_REQUEST');
    expect(refuse(formatAuditState({ ...state, origin: 'elsewhere' }))).toBe('BAD_REQUEST');
    expect(refuse(formatAuditState({ ...state, checkpoint: state.checkpoint.replace('\n9\n', '\n10\n') }))).toBe(
      'BAD_REQUEST',
    );
    expect(refuse(JSON.stringify({ ...state, type: 'other' }))).toBe('BAD_REQUEST');
    expect(refuse('[]')).toBe('BAD_REQUEST');
  });
});

describe('an honest registry passes', () => {
  it('first audit trusts the served log key, later audits use the remembered one and prove consistency', async () => {
    await publishMany(t, 'a', 3);
    const first = await auditOnce();
    expect(first.report).toMatchObject({
      ok: true,
      logKey: { verifier: t.registry.log.verifierString, source: 'tofu' },
      origin: t.registry.log.origin,
      previous: null,
      checkpoint: { size: 7 },
      consistency: 'first-audit',
      entries: { from: 0, to: 7, checked: 7, attestation: 3, bundle: 3, key: 1, yank: 0, malformed: 0 },
      blobs: { checked: 3 },
      problems: [],
    });
    expect(first.report.warnings.join('\n')).toMatch(/trust on first use/);
    const state = first.nextState!;
    expect(state.loggedKids).toEqual([await t.registry.activeKid()]);

    const unchanged = await auditOnce(state);
    expect(unchanged.report).toMatchObject({
      ok: true,
      consistency: 'unchanged',
      logKey: { source: 'state' },
      entries: { checked: 0 },
    });

    // A yank, a key rotation, and a publish under the new key.
    await t.registry.yank(t.publisher, `${manifestBytesName('a-0')}`, '1.0.0', 'broken');
    const { retired, active } = await t.registry.rotateSigningKey();
    await t.registry.publish(manifestBytes('after-rotation'), t.publisher);
    const second = await auditOnce(state);
    expect(second.report).toMatchObject({
      ok: true,
      previous: { size: 7 },
      checkpoint: { size: 11 },
      consistency: 'proven',
      entries: { from: 7, to: 11, checked: 4, attestation: 1, bundle: 1, yank: 1, key: 1 },
      blobs: { checked: 1 },
    });
    expect(second.nextState!.loggedKids).toEqual([retired, active]);

    // The given key wins over the remembered one.
    const flagged = await auditOnce(second.nextState, { logKey: t.registry.log.verifierString });
    expect(flagged.report).toMatchObject({ ok: true, logKey: { source: 'flag' } });
  });

  it('walks full and partial entry bundles from the middle of a bundle, and reaches the same state as a fresh walk', async () => {
    await publishMany(t, 'b', 75);
    const state = await passingState();
    expect(state.size).toBe(151);
    await publishMany(t, 'c', 225);
    const requested: string[] = [];
    const spy: typeof fetch = (input, init) => {
      requested.push(new URL(String(input)).pathname);
      return fetch(input, init);
    };
    const { report, nextState } = await auditOnce(state, { fetch: spy });
    expect(report).toMatchObject({
      ok: true,
      consistency: 'proven',
      entries: { from: 151, to: 601, checked: 450, attestation: 225, bundle: 225 },
      blobs: { checked: 225 },
    });
    expect(requested.filter((path) => path.startsWith('/v1/log/tile/'))).toEqual([
      '/v1/log/tile/entries/000',
      '/v1/log/tile/entries/001',
      '/v1/log/tile/entries/002.p/89',
    ]);
    expect(requested).toContain('/v1/log/proof/consistency');
    const fresh = await auditOnce();
    expect(fresh.report.ok).toBe(true);
    expect(fresh.nextState!.frontier).toEqual(nextState!.frontier);
    expect(fresh.nextState!.rootHash).toBe(nextState!.rootHash);
    expect(nextState!.frontier).toHaveLength(frontierLength(601));
  });

  it('saves the state file only after a passing audit, atomically, and refuses to clobber a file that changed meanwhile', async () => {
    const file = join(t.dir, 'nested', 'audit-state.json');
    const report = await auditWithStateFile({ registry: t.url, stateFile: file });
    expect(report).toMatchObject({ ok: true, stateFile: file, stateWritten: true });
    const saved = parseAuditState(readFileSync(file, 'utf8'));
    expect(saved.size).toBe(1);
    // Another auditor advances the file while this one runs: this one must not write back an older view.
    await publishMany(t, 'race', 2);
    let raced = false;
    const racing: typeof fetch = async (input, init) => {
      if (!raced && new URL(String(input)).pathname === '/v1/log/tile/entries/000.p/5') {
        raced = true;
        writeFileSync(file, formatAuditState({ ...saved, auditedAt: 'by someone else' }));
      }
      return fetch(input, init);
    };
    const second = await auditWithStateFile({ registry: t.url, stateFile: file, fetch: racing });
    expect(second).toMatchObject({ ok: true, stateWritten: false });
    expect(parseAuditState(readFileSync(file, 'utf8')).auditedAt).toBe('by someone else');
  });
});

function manifestBytesName(name: string): string {
  return JSON.parse(new TextDecoder().decode(manifestBytes(name))).name as string;
}

describe('tampering is detected', () => {
  it('(a1) a rewritten attestation entry: the new entries do not hash to the root and the signature fails', async () => {
    await publishMany(t, 'x', 2);
    const file = join(t.dir, 'state.json');
    expect((await auditWithStateFile({ registry: t.url, stateFile: file })).ok).toBe(true);
    const before = readFileSync(file);
    const victim = (await t.registry.publish(manifestBytes('y'), t.publisher)).record.logIndex;
    const entry = (await t.registry.store.readLogEntries(victim, victim + 1))[0]!;
    const jws = JSON.parse(entry.data.toString('utf8')) as { signature: string };
    jws.signature = (jws.signature.startsWith('A') ? 'B' : 'A') + jws.signature.slice(1);
    dropTriggers(t, 'log_entries_no_update');
    sql(t)
      .prepare('UPDATE log_entries SET data = ? WHERE idx = ?')
      .run(Buffer.from(canonicalizeToBytes(jws as unknown as JsonValue)), victim);

    const report = await auditWithStateFile({ registry: t.url, stateFile: file });
    expect(report.ok).toBe(false);
    expect(report.consistency).toBe('proven');
    expect(codes(report)).toEqual(['ROOT_MISMATCH', 'SIGNATURE_INVALID']);
    expect(report.problems.find((p) => p.code === 'SIGNATURE_INVALID')!.index).toBe(victim);
    expect(report.stateWritten).toBe(false);
    expect(readFileSync(file).equals(before)).toBe(true);
    // A fresh auditor with no state catches it the same way (and, walking every leaf, finds the bundle leaf of the
    // statement it could not verify unpaired: issue 26).
    expect(codes((await auditOnce()).report)).toEqual(['BUNDLE_ENTRY_INVALID', 'ROOT_MISMATCH', 'SIGNATURE_INVALID']);
  });

  it('(a1) an old entry rewritten behind the remembered frontier is caught by any full walk', async () => {
    await publishMany(t, 'x', 3);
    const state = await passingState();
    dropTriggers(t, 'log_entries_no_update');
    const entry = (await t.registry.store.readLogEntries(1, 2))[0]!;
    const other = (await t.registry.store.readLogEntries(2, 3))[0]!;
    sql(t).prepare('UPDATE log_entries SET data = ? WHERE idx = 1').run(other.data);
    expect(entry.data.equals(other.data)).toBe(false);
    // The remembered frontier vouches for leaves [0, 7): nothing new to walk.
    expect((await auditOnce(state)).report.ok).toBe(true);
    // A full walk recomputes the root from the served entries (and the rewritten statement's bundle leaf is unpaired).
    const fresh = await auditOnce(undefined, { logKey: state.logKey });
    expect(codes(fresh.report)).toEqual(['BUNDLE_ENTRY_INVALID', 'ROOT_MISMATCH', 'SUBJECT_REBOUND']);
  });

  it('(a2) rewritten manifest bytes: the registry refuses to serve them, and a lying server is caught by the digest', async () => {
    const state = await passingState();
    const published = await t.registry.publish(manifestBytes('bytes'), t.publisher);
    const digest = published.record.digest;
    dropTriggers(t, 'blobs_no_update');
    const forged = manifestBytes('bytes', '1.0.0', 'Tool bytes, now exfiltrating');
    sql(t)
      .prepare('UPDATE blobs SET bytes = ?, size = ? WHERE digest = ?')
      .run(Buffer.from(forged), forged.byteLength, digest);
    const served = await auditOnce(state);
    expect(codes(served.report)).toEqual(['FETCH_FAILED']);
    expect(served.report.problems[0]!.message).toMatch(/HTTP 500 INTEGRITY_ERROR/);
    expect(served.nextState).toBeUndefined();

    // The same forged bytes through a server that does not re-check them.
    const lying = proxyFetch((path, response) =>
      path === `/v1/blobs/${digest}` ? new Response(forged, { status: 200 }) : response,
    );
    const { report } = await auditOnce(state, { fetch: lying });
    expect(codes(report)).toEqual(['DIGEST_MISMATCH']);
    expect(report.problems[0]!.message).toContain(computeDigest(forged));
    expect(report.problems[0]!.index).toBe(published.record.logIndex);
  });

  it('(b) a truncated and regrown log: rollback, then a fork at the same size, then a failing consistency proof; the state never advances', async () => {
    // Two leaves per publish: its attestation and its bundle.
    await publishMany(t, 'h', 1); // size 3
    await t.registry.publish(manifestBytes('h-1'), t.publisher); // 5
    await t.registry.publish(manifestBytes('h-2'), t.publisher); // 7
    await t.registry.publish(manifestBytes('h-3'), t.publisher); // 9
    const file = join(t.dir, 'state.json');
    expect((await auditWithStateFile({ registry: t.url, stateFile: file })).ok).toBe(true);
    const remembered = readFileSync(file);
    expect(parseAuditState(remembered.toString('utf8')).size).toBe(9);

    truncateLog(t, 3);
    const rollback = await auditWithStateFile({ registry: t.url, stateFile: file });
    expect(rollback).toMatchObject({ ok: false, consistency: 'refused', checkpoint: { size: 3 }, stateWritten: false });
    expect(codes(rollback)).toEqual(['LOG_ROLLBACK']);
    expect(readFileSync(file).equals(remembered)).toBe(true);

    for (const name of ['other-1', 'other-2', 'other-3']) await t.registry.publish(manifestBytes(name), t.publisher);
    const sameSize = await auditWithStateFile({ registry: t.url, stateFile: file });
    expect(sameSize).toMatchObject({ ok: false, consistency: 'refused', checkpoint: { size: 9 } });
    expect(codes(sameSize)).toEqual(['LOG_FORK']);
    expect(readFileSync(file).equals(remembered)).toBe(true);

    await t.registry.publish(manifestBytes('other-4'), t.publisher);
    const grown = await auditWithStateFile({ registry: t.url, stateFile: file });
    expect(grown).toMatchObject({
      ok: false,
      consistency: 'refused',
      checkpoint: { size: 11 },
      entries: { checked: 0 },
    });
    expect(codes(grown)).toEqual(['LOG_FORK']);
    expect(grown.problems[0]!.message).toMatch(/not consistent with the remembered size 9/);
    expect(readFileSync(file).equals(remembered)).toBe(true);

    // The regrown log is self-consistent: a newcomer without state sees nothing wrong (that is what state is for).
    expect((await auditOnce()).report.ok).toBe(true);
  });

  it('a consistency proof that does not verify (a lying proof server) is refused as a fork', async () => {
    const state = await passingState();
    await publishMany(t, 'l', 3);
    const lying = proxyFetch((path, response) =>
      path === '/v1/log/proof/consistency'
        ? Response.json({
            from: 1,
            to: 4,
            hashes: [Buffer.alloc(32, 1).toString('base64'), Buffer.alloc(32, 2).toString('base64')],
          })
        : response,
    );
    const { report } = await auditOnce(state, { fetch: lying });
    expect(report.consistency).toBe('refused');
    expect(codes(report)).toEqual(['LOG_FORK']);
  });
});

describe('keys and entry shapes', () => {
  it('a checkpoint not signed by the trusted log key, or of another origin, is refused', async () => {
    const state = await passingState();
    const { formatVerifierString } = await import('../../src/log/index.ts');
    const foreign = formatVerifierString(t.registry.log.origin, generateEd25519KeyPair().publicKey);
    const wrongKey = await auditOnce(undefined, { logKey: foreign });
    expect(codes(wrongKey.report)).toEqual(['CHECKPOINT_INVALID']);
    expect(wrongKey.report.problems[0]!.message).toMatch(/UNKNOWN_KEY/);
    const otherOrigin = await auditOnce({ ...state, origin: 'example.com/log' });
    expect(codes(otherOrigin.report)).toEqual(['CHECKPOINT_INVALID']);
    const unreachable = await runAudit({ registry: 'http://127.0.0.1:1', state });
    expect(codes(unreachable.report)).toEqual(['FETCH_FAILED']);
  });

  it('a JWKS that disagrees with the log: a missing key, a shortened validity window', async () => {
    await publishMany(t, 'k', 2);
    const kid = await t.registry.activeKid();
    const jwksRewrite = (edit: (jwks: Jwks) => Jwks): typeof fetch =>
      proxyFetch(async (path, response) =>
        path === '/.well-known/jwks.json' ? Response.json(edit((await response.json()) as Jwks)) : response,
      );
    // Only the Ed25519 attestation keys are edited; the P-256 bundle keys (issue 26) stay as served.
    const attestationKeys = (edit: (key: Jwks['keys'][number]) => Jwks['keys'][number] | undefined) =>
      jwksRewrite((jwks) => ({
        keys: jwks.keys.flatMap((key) => ((key.kty as string) === 'OKP' ? (edit(key) ?? []) : [key])),
      }));
    const missing = await auditOnce(undefined, { fetch: attestationKeys(() => undefined) });
    // Unverified attestations leave their bundle leaves unpaired too.
    expect(codes(missing.report)).toEqual(['BUNDLE_ENTRY_INVALID', 'KEY_ENTRY_INVALID', 'UNKNOWN_KEY']);
    const expired = await auditOnce(undefined, { fetch: attestationKeys((key) => ({ ...key, exp: key.nbf })) });
    expect(codes(expired.report)).toEqual(['BUNDLE_ENTRY_INVALID', 'KEY_NOT_VALID']);
    // Another last character (the kid is random: a fixed replacement is a no-op one time in 64).
    const otherKid = `${kid.slice(0, -1)}${kid.endsWith('A') ? 'B' : 'A'}`;
    const renamed = await auditOnce(undefined, { fetch: attestationKeys((key) => ({ ...key, kid: otherKid })) });
    expect(codes(renamed.report)).toEqual(['BUNDLE_ENTRY_INVALID', 'JWKS_INVALID', 'KEY_ENTRY_INVALID', 'UNKNOWN_KEY']);
  });

  it('an attestation signed by a key the log never introduced, and malformed key, yank and unknown entries', async () => {
    const state = await passingState();
    // A second key slipped into the JWKS without a key entry, used to sign a statement over existing bytes.
    const published = await t.registry.publish(manifestBytes('real'), t.publisher);
    const secret = generateSigningKey(join(t.dir, 'keys'));
    await t.registry.store.insertSigningKey({
      kid: secret.kid,
      publicJwk: JSON.stringify(secret.publicJwk),
      notBefore: 0,
      notAfter: 1,
      logIndex: null,
    });
    const statement = buildPublishStatement({
      name: `${manifestBytesName('real')}-shadow`,
      version: '1.0.0',
      digest: published.record.digest as `sha256:${string}`,
      predicate: {
        registry: 'x',
        publisher: 'x',
        storedAt: new Date(0).toISOString(),
        policy: 'x',
        size: 1,
        previousDigest: null,
      },
    });
    const enc = (value: unknown): Uint8Array => canonicalizeToBytes(value as JsonValue);
    await t.registry.store.transaction(async () => {
      await t.registry.log.appendLeaf('attestation', signStatement(statement, secret));
      await t.registry.log.appendLeaf(
        'key',
        enc({
          type: 'toolseal.key/v1',
          kid: secret.kid.replace(/^./, secret.kid.startsWith('Z') ? 'Y' : 'Z'),
          publicJwk: secret.publicJwk,
          notBefore: 0,
          retires: null,
        }),
      );
      await t.registry.log.appendLeaf(
        'yank',
        enc({ type: 'toolseal.yank/v1', subject: 'nope', digest: 'sha256:00', reason: '', yankedAt: 'yesterday' }),
      );
      await t.registry.log.appendLeaf('yank', enc({ type: 'something/v1' }));
      await t.registry.log.appendLeaf('yank', new TextEncoder().encode('{"b":1, "a":2}'));
    });
    await t.registry.log.signLatestCheckpoint();
    const { report } = await auditOnce(state);
    const byIndex = report.problems.map((p) => [p.index, p.code]);
    // The publish's bundle leaf follows its attestation; the forged leaves come after it.
    const base = published.record.logIndex + 1;
    expect(byIndex).toEqual(
      expect.arrayContaining([
        [base + 1, 'KEY_NOT_IN_LOG'],
        [base + 1, 'SUBJECT_MISMATCH'],
        [base + 1, 'MANIFEST_INVALID'],
        [base + 2, 'KEY_ENTRY_INVALID'],
        [base + 3, 'YANK_ENTRY_INVALID'],
        [base + 4, 'ENTRY_MALFORMED'],
        [base + 5, 'ENTRY_MALFORMED'],
      ]),
    );
    expect(report.problems.find((p) => p.index === base + 2)!.message).toMatch(/thumbprint/);
    expect(report.problems.find((p) => p.index === base + 5)!.message).toMatch(/JCS/);
    expect(report.entries).toMatchObject({ attestation: 2, bundle: 1, key: 1, yank: 1, malformed: 2 });
    expect(report.ok).toBe(false);
  });
});
