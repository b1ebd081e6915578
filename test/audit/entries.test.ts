// The auditor's per-entry checks (src/audit/entries.ts): entry form from parseLogEntry with the audit's message
// prefixes, and the rules across entries (keys in log order, one digest per name@version, JWKS agreement).

import { describe, expect, it } from 'vitest';
import {
  type AttestationFacts,
  checkEntry,
  createEntryContext,
  type EntryContext,
  type EntryKind,
} from '../../src/audit/entries.ts';
import type { AuditProblemCode } from '../../src/audit/report.ts';
import {
  buildPublishStatement,
  computeKid,
  type Jwks,
  signingKeyFromPrivate,
  signStatement,
} from '../../src/attest/index.ts';
import type { SigningKey } from '../../src/attest/jwk.ts';
import { computeDigest } from '../../src/core/digest.ts';
import { formatKeyEntry, formatYankEntry } from '../../src/log/entries.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

function createKey(): SigningKey {
  const { privateKey } = generateEd25519KeyPair();
  const jwk = privateKey.export({ format: 'jwk' });
  return signingKeyFromPrivate(privateKey, computeKid({ crv: String(jwk.crv), x: String(jwk.x) }));
}

interface Checked {
  kind: EntryKind;
  problems: [AuditProblemCode, string][];
  manifests: AttestationFacts[];
}

async function check(index: number, data: Uint8Array, context: EntryContext): Promise<Checked> {
  const problems: [AuditProblemCode, string][] = [];
  const manifests: AttestationFacts[] = [];
  const kind = await checkEntry(
    index,
    data,
    context,
    (code, message) => problems.push([code, message]),
    async (facts) => {
      manifests.push(facts);
    },
  );
  return { kind, problems, manifests };
}

const digestA = computeDigest(new TextEncoder().encode('a'));
const digestB = computeDigest(new TextEncoder().encode('b'));

function yank(subject: string, digest: `sha256:${string}`): Uint8Array {
  return formatYankEntry({ subject, digest, reason: 'broken', yankedAt: '2025-01-01T00:00:00Z' });
}

function keyEntry(key: SigningKey, notBefore: number, retires: { kid: string; notAfter: number } | null = null) {
  return formatKeyEntry({ kid: key.kid, publicJwk: key.publicJwk, notBefore, retires });
}

describe('entry form', () => {
  it('reports parseLogEntry problems with the entry index and counts them by kind', async () => {
    const context = createEntryContext([], undefined);
    const unsorted = await check(3, new TextEncoder().encode('{"b":1,"a":2}'), context);
    expect(unsorted).toMatchObject({
      kind: 'malformed',
      problems: [['ENTRY_MALFORMED', 'entry 3 is not in JCS canonical form']],
    });
    const badYank = await check(4, new TextEncoder().encode('{"type":"toolseal.yank/v1"}'), context);
    expect(badYank.kind).toBe('yank');
    expect(badYank.problems).toEqual([
      ['YANK_ENTRY_INVALID', 'yank entry 4: expected exactly type, subject, digest, reason, yankedAt'],
    ]);
    const badKey = await check(5, new TextEncoder().encode('{"type":"toolseal.key/v1"}'), context);
    expect(badKey.kind).toBe('key');
    expect(badKey.problems[0]![1]).toMatch(/^key entry 5: expected exactly/);
    expect(context.loggedKids.size).toBe(0);
  });
});

describe('yank rules across entries', () => {
  it('a yank must name the attested digest, and a subject is yanked once', async () => {
    const context = createEntryContext([], undefined);
    context.subjects.set('acme/tool@1.0.0', digestA);
    expect((await check(7, yank('acme/tool@1.0.0', digestB), context)).problems).toEqual([
      ['YANK_ENTRY_INVALID', `yank entry 7: acme/tool@1.0.0 was attested with ${digestA}, not ${digestB}`],
    ]);
    expect((await check(8, yank('acme/tool@1.0.0', digestA), context)).problems).toEqual([
      ['YANK_ENTRY_INVALID', 'yank entry 8: acme/tool@1.0.0 was already yanked'],
    ]);
    expect((await check(9, yank('acme/other@1.0.0', digestA), context)).problems).toEqual([]);
  });
});

describe('key rules across entries', () => {
  it('a kid is introduced once and only a logged key is retired (no JWKS: nothing more is checked)', async () => {
    const first = createKey();
    const second = createKey();
    const context = createEntryContext([], undefined);
    expect(await check(0, keyEntry(first, 10), context)).toMatchObject({ kind: 'key', problems: [] });
    expect((await check(1, keyEntry(first, 10), context)).problems).toEqual([
      ['KEY_ENTRY_INVALID', `key entry 1: key ${first.kid} was already introduced by an earlier key entry`],
    ]);
    const stranger = createKey();
    expect((await check(2, keyEntry(second, 20, { kid: stranger.kid, notAfter: 20 }), context)).problems).toEqual([
      ['KEY_ENTRY_INVALID', `key entry 2: retires key ${stranger.kid}, which no earlier key entry introduced`],
    ]);
    expect([...context.loggedKids]).toEqual([first.kid, second.kid]);
  });

  it('the JWKS must publish the logged key with the logged window', async () => {
    const old = createKey();
    const next = createKey();
    const jwks: Jwks = {
      keys: [
        { ...old.publicJwk, nbf: 10, exp: 25 },
        { ...next.publicJwk, nbf: 20 },
      ],
    };
    const context = createEntryContext([old.kid], jwks);
    const messages = (await check(6, keyEntry(next, 21, { kid: old.kid, notAfter: 20 }), context)).problems.map(
      ([code, message]) => `${code} ${message}`,
    );
    expect(messages).toEqual([
      `KEY_ENTRY_INVALID key entry 6: the JWKS says key ${next.kid} is valid from 20, the log says 21`,
      `KEY_ENTRY_INVALID key entry 6: the JWKS says key ${old.kid} expires at 25, the log says 20`,
    ]);
    const missing = createKey();
    expect((await check(7, keyEntry(missing, 30), context)).problems).toEqual([
      ['KEY_ENTRY_INVALID', `key entry 7: key ${missing.kid} is not in the registry's JWKS`],
    ]);
    const impostor = createKey();
    const swapped: Jwks = { keys: [{ ...impostor.publicJwk, kid: next.kid, nbf: 20 }] };
    const fresh = createEntryContext([old.kid], swapped);
    expect((await check(8, keyEntry(next, 20, { kid: old.kid, notAfter: 20 }), fresh)).problems).toEqual([
      ['KEY_ENTRY_INVALID', `key entry 8: the JWKS holds another public key under kid ${next.kid}`],
      ['KEY_ENTRY_INVALID', `key entry 8: the retired key ${old.kid} is not in the JWKS`],
    ]);
  });
});

describe('attestation entries', () => {
  function attest(key: SigningKey, name: string, digest: `sha256:${string}`): Uint8Array {
    const statement = buildPublishStatement({
      name,
      version: '1.0.0',
      digest,
      predicate: {
        registry: 'http://127.0.0.1',
        publisher: 'acme',
        storedAt: new Date(100_000).toISOString(),
        policy: 'p',
        size: 42,
        previousDigest: null,
      },
    });
    return signStatement(statement, key);
  }

  it('verifies against the JWKS, requires a logged key, refuses a rebound subject and hands on the manifest facts', async () => {
    const key = createKey();
    const jwks: Jwks = { keys: [{ ...key.publicJwk, nbf: 0 }] };
    const unlogged = createEntryContext([], jwks);
    const first = await check(1, attest(key, 'acme/tool', digestA), unlogged);
    expect(first.kind).toBe('attestation');
    expect(first.problems.map(([code]) => code)).toEqual(['KEY_NOT_IN_LOG']);
    expect(first.manifests).toEqual([{ digest: digestA, subjectName: 'acme/tool@1.0.0', size: 42 }]);

    const logged = createEntryContext([key.kid], jwks);
    expect((await check(2, attest(key, 'acme/tool', digestA), logged)).problems).toEqual([]);
    const rebound = await check(3, attest(key, 'acme/tool', digestB), logged);
    expect(rebound.problems).toEqual([
      [
        'SUBJECT_REBOUND',
        `attestation entry 3 attests acme/tool@1.0.0 again (earlier ${digestA}, now ${digestB}): name@version is immutable`,
      ],
    ]);
    const stranger = await check(4, attest(createKey(), 'acme/x', digestA), logged);
    expect(stranger.problems.map(([code]) => code)).toEqual(['UNKNOWN_KEY']);
    expect(stranger.problems[0]![1]).toMatch(/^attestation entry 4: UNKNOWN_KEY: /);
    expect(stranger.manifests).toEqual([]);
  });

  it('without a JWKS an attestation is only counted', async () => {
    const result = await check(1, attest(createKey(), 'acme/tool', digestA), createEntryContext([], undefined));
    expect(result).toEqual({ kind: 'attestation', problems: [], manifests: [] });
  });
});
