// The registry's transparency log over HTTP: publish and auditor responses carry proofs that verify with the log
// key, proof endpoints verify and refuse sizes past the latest checkpoint, tiles match the node store, and the
// checkpoint signer refuses to sign a tampered tree.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { canonicalizeToBytes, type JsonValue } from '../../src/pipeline/index.ts';
import {
  formatEntryBundlePath,
  formatTilePath,
  formatVerifierString,
  hashLeaf,
  parseCheckpoint,
  parseEntryBundle,
  parseTlogProof,
  readTile,
  splitTileHashes,
  verifyCheckpoint,
  verifyConsistencyProof,
  verifyInclusionProof,
  verifyTlogProof,
} from '../../src/log/index.ts';
import { bodyOf } from '../../src/registry/index.ts';
import { naiveRootHash } from '../log/helpers.ts';
import {
  dropTriggers,
  manifestBytes,
  publishMany,
  publishOverHttp,
  sql,
  startTestRegistry,
  type TestRegistry,
} from './helpers.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

let t: TestRegistry;

beforeEach(async () => {
  t = await startTestRegistry();
});

afterEach(async () => {
  await t.close();
});

function b64(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'base64'));
}

async function getBytes(path: string): Promise<{ status: number; bytes: Uint8Array; type: string | null }> {
  const response = await fetch(`${t.url}${path}`);
  return {
    status: response.status,
    bytes: new Uint8Array(await response.arrayBuffer()),
    type: response.headers.get('content-type'),
  };
}

async function getJson(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${t.url}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The log key as the registry holds it (the trust anchor), and as served: they must agree. */
async function logKey(): Promise<string> {
  const served = new TextDecoder().decode((await getBytes('/v1/log/key')).bytes).trim();
  expect(served).toBe(t.registry.log.verifierString);
  return t.registry.log.verifierString;
}

/** Every leaf's data, straight from the database, and the RFC 6962 root of the first `size` of them computed naively. */
async function leaves(): Promise<Uint8Array[]> {
  return (await t.registry.store.readLogEntries(0, await t.registry.store.getLogSize())).map(
    (entry) => new Uint8Array(entry.data),
  );
}

async function naiveRoot(size: number): Promise<Uint8Array> {
  return naiveRootHash((await leaves()).slice(0, size));
}

interface InclusionJson {
  index: number;
  size: number;
  hashes: string[];
  checkpoint: string;
}

describe('publish response and auditor query carry verifiable inclusion proofs', () => {
  it('POST /v1/manifests returns logIndex, an inclusion proof with its checkpoint and a tlog-proof that verify', async () => {
    const key = await logKey();
    for (const name of ['alpha', 'beta', 'gamma']) {
      const { status, body } = await publishOverHttp(t, manifestBytes(name));
      expect(status).toBe(201);
      const logIndex = body['logIndex'] as number;
      expect(Number.isSafeInteger(logIndex)).toBe(true);
      // The leaf is the exact attestation bytes, as served (JCS of the flattened JWS).
      const served = await getBytes(`/v1/manifests/${String(body['name'])}/1.0.0/attestation`);
      const attestation = served.bytes;
      expect(Buffer.from(canonicalizeToBytes(body['attestation'] as JsonValue)).equals(Buffer.from(attestation))).toBe(
        true,
      );
      const leafHash = hashLeaf(attestation);
      expect(
        Buffer.from(leafHash).equals((await t.registry.store.readLogEntries(logIndex, logIndex + 1))[0]!.leafHash),
      ).toBe(true);

      const proof = body['inclusionProof'] as InclusionJson;
      expect(proof.index).toBe(logIndex);
      const checkpoint = verifyCheckpoint(proof.checkpoint, key, { origin: t.registry.log.origin });
      expect(checkpoint.size).toBe(proof.size);
      expect(checkpoint.size).toBeGreaterThan(logIndex);
      verifyInclusionProof(leafHash, logIndex, checkpoint.size, proof.hashes.map(b64), checkpoint.rootHash);
      expect(Buffer.from(checkpoint.rootHash).equals(Buffer.from(await naiveRoot(checkpoint.size)))).toBe(true);

      const tlog = verifyTlogProof(body['tlogProof'] as string, leafHash, key, { origin: t.registry.log.origin });
      expect(tlog.index).toBe(logIndex);
      expect(tlog.checkpoint.size).toBe(checkpoint.size);
      // The proof text carries the same signed checkpoint, verbatim.
      expect(parseTlogProof(body['tlogProof'] as string).checkpoint).toBe(proof.checkpoint);
      // Another leaf's hash, or another index, does not verify.
      expect(() => verifyTlogProof(body['tlogProof'] as string, hashLeaf(new Uint8Array([1])), key)).toThrow(
        ToolsealError,
      );
    }
  });

  it('a republish of the same bytes (200) carries a proof too, and a foreign key refuses the checkpoint', async () => {
    const bytes = manifestBytes('same');
    const first = await publishOverHttp(t, bytes);
    await publishOverHttp(t, manifestBytes('later'));
    const again = await publishOverHttp(t, bytes);
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body['logIndex']).toBe(first.body['logIndex']);
    const attestation = canonicalizeToBytes(again.body['attestation'] as JsonValue);
    const verified = verifyTlogProof(again.body['tlogProof'] as string, hashLeaf(attestation), await logKey());
    expect(verified.index).toBe(first.body['logIndex']);
    // Same origin name, another key: the checkpoint has no signature by a trusted key.
    const foreign = formatVerifierString(t.registry.log.origin, generateEd25519KeyPair().publicKey);
    let code: string | undefined;
    try {
      verifyTlogProof(again.body['tlogProof'] as string, hashLeaf(attestation), foreign);
    } catch (error) {
      code = (error as ToolsealError).code;
    }
    expect(code).toBe('UNKNOWN_KEY');
  });

  it('GET /v1/attestations/sha256:<hex> binds the digest with logIndex, inclusion proof and tlog-proof that verify at the latest checkpoint', async () => {
    const key = await logKey();
    const { body: published } = await publishOverHttp(t, manifestBytes('audited'));
    const digest = published['digest'] as string;
    // More publishes after it: the auditor's proof is to the newer checkpoint.
    await publishMany(t, 'more', 5);
    const { status, body } = await getJson(`/v1/attestations/${digest}`);
    expect(status).toBe(200);
    const bindings = body['bindings'] as Record<string, unknown>[];
    expect(bindings).toHaveLength(1);
    const binding = bindings[0]!;
    expect(binding['logIndex']).toBe(published['logIndex']);
    const attestation = canonicalizeToBytes(binding['attestation'] as JsonValue);
    const leafHash = hashLeaf(attestation);
    const proof = binding['inclusionProof'] as InclusionJson;
    const checkpoint = verifyCheckpoint(proof.checkpoint, key);
    expect(checkpoint.size).toBe((await t.registry.latestCheckpoint())!.size);
    expect(checkpoint.size).toBeGreaterThan((published['inclusionProof'] as InclusionJson).size);
    verifyInclusionProof(leafHash, proof.index, proof.size, proof.hashes.map(b64), checkpoint.rootHash);
    const tlog = verifyTlogProof(binding['tlogProof'] as string, leafHash, key);
    expect(tlog.index).toBe(binding['logIndex']);
    // The older checkpoint from the publish response is consistent with the newer one.
    const older = verifyCheckpoint((published['inclusionProof'] as InclusionJson).checkpoint, key);
    const consistency = await getJson(`/v1/log/proof/consistency?from=${older.size}&to=${checkpoint.size}`);
    verifyConsistencyProof(
      older.size,
      checkpoint.size,
      older.rootHash,
      checkpoint.rootHash,
      (consistency.body['hashes'] as string[]).map(b64),
    );
  });
});

describe('proof endpoints', () => {
  it('every inclusion and consistency proof up to the latest checkpoint verifies against independently computed roots', async () => {
    await publishMany(t, 'p', 6); // 1 key entry + 6 × (attestation + bundle leaf)
    const latest = verifyCheckpoint((await t.registry.latestCheckpoint())!.note, await logKey());
    const served = verifyCheckpoint(
      new TextDecoder().decode((await getBytes('/v1/log/checkpoint')).bytes),
      t.registry.log.verifierString,
    );
    expect(served.size).toBe(latest.size);
    const n = latest.size;
    expect(n).toBe(13);
    expect(Buffer.from(latest.rootHash).equals(Buffer.from(await naiveRoot(n)))).toBe(true);
    const all = await leaves();
    for (let size = 1; size <= n; size++) {
      const root = await naiveRoot(size);
      for (let index = 0; index < size; index++) {
        const { status, body } = await getJson(`/v1/log/proof/inclusion?index=${index}&size=${size}`);
        expect(status).toBe(200);
        expect(body).toMatchObject({ index, size });
        verifyInclusionProof(hashLeaf(all[index]!), index, size, (body['hashes'] as string[]).map(b64), root);
      }
      for (let to = size; to <= n; to++) {
        const { status, body } = await getJson(`/v1/log/proof/consistency?from=${size}&to=${to}`);
        expect(status).toBe(200);
        verifyConsistencyProof(size, to, root, await naiveRoot(to), (body['hashes'] as string[]).map(b64));
      }
    }
  });

  it('refuses (400) a size beyond the latest checkpoint, also when leaves exist past it', async () => {
    await publishMany(t, 'q', 3);
    const size = (await t.registry.latestCheckpoint())!.size;
    const expectBadRequest = async (path: string): Promise<void> => {
      const { status, body } = await getJson(path);
      expect(status, path).toBe(400);
      expect(body['code'], path).toBe('BAD_REQUEST');
    };
    await expectBadRequest(`/v1/log/proof/inclusion?index=0&size=${size + 1}`);
    await expectBadRequest(`/v1/log/proof/consistency?from=1&to=${size + 1}`);
    await expectBadRequest(`/v1/log/proof/inclusion?index=${size}&size=${size}`);
    await expectBadRequest(`/v1/log/proof/consistency?from=${size}&to=${size - 1}`);
    await expectBadRequest('/v1/log/proof/consistency?from=0&to=1');
    await expectBadRequest('/v1/log/proof/inclusion?index=-1&size=1');
    // A leaf appended but not yet checkpointed: the tree exists in the store, but no proof may reach it.
    await t.registry.store.transaction(
      async () => await t.registry.log.appendLeaf('yank', new TextEncoder().encode('{"unsigned":true}')),
    );
    expect(await t.registry.store.getLogSize()).toBe(size + 1);
    await expectBadRequest(`/v1/log/proof/inclusion?index=${size}&size=${size + 1}`);
    await expectBadRequest(`/v1/log/proof/consistency?from=${size}&to=${size + 1}`);
    expect((await getBytes(`/v1/log/${formatEntryBundlePath(0, size + 1)}`)).status).toBe(404);
    expect((await getBytes(`/v1/log/${formatTilePath(0, 0, size + 1)}`)).status).toBe(404);
    expect((await getBytes(`/v1/log/${formatTilePath(0, 0, size)}`)).status).toBe(200);
  });
});

describe('tiles and entry bundles', () => {
  it('serves tiles equal to readTile, full and partial, and entry bundles whose leaves hash to the tree', async () => {
    // 1 key entry + 150 × (attestation + bundle leaf) = 301 leaves: tile 0 full, tile 1 partial (45)
    await publishMany(t, 'tile', 150);
    const checkpoint = verifyCheckpoint((await t.registry.latestCheckpoint())!.note, await logKey());
    expect(checkpoint.size).toBe(301);
    const cases: [number, number, number][] = [
      [0, 0, 256],
      [0, 1, 45],
      [1, 0, 1],
      [0, 0, 17], // a partial width of a tile that is full by now is still served
    ];
    for (const [level, index, width] of cases) {
      const path = `/v1/log/${formatTilePath(level, index, width)}`;
      const { status, bytes, type } = await getBytes(path);
      expect(status, path).toBe(200);
      expect(type).toBe('application/octet-stream');
      const tile = await t.registry.log.withStoredNodes((reader) => readTile(reader, level, index, width));
      expect(Buffer.from(bytes).equals(Buffer.from(tile)), path).toBe(true);
    }
    // Entry bundles: parse, count, and their leaf hashes are the level-0 tiles; all of them give the signed root.
    const entries: Uint8Array[] = [];
    for (const [index, width] of [
      [0, 256],
      [1, 45],
    ] as const) {
      const bundle = await getBytes(`/v1/log/${formatEntryBundlePath(index, width)}`);
      expect(bundle.status).toBe(200);
      const parsed = parseEntryBundle(bundle.bytes);
      expect(parsed).toHaveLength(width);
      const tile = splitTileHashes((await getBytes(`/v1/log/${formatTilePath(0, index, width)}`)).bytes);
      parsed.forEach((entry, i) => {
        expect(Buffer.from(hashLeaf(entry)).equals(Buffer.from(tile[i]!))).toBe(true);
      });
      entries.push(...parsed);
    }
    expect(Buffer.from(naiveRootHash(entries)).equals(Buffer.from(checkpoint.rootHash))).toBe(true);
    // A level-1 node is the hash over its 256 leaves.
    const top = await t.registry.log.withStoredNodes((reader) => readTile(reader, 1, 0, 1));
    expect(Buffer.from(naiveRootHash(entries.slice(0, 256))).equals(Buffer.from(top))).toBe(true);
    // Tiles that do not exist yet, or non-canonical paths.
    expect((await getBytes(`/v1/log/${formatTilePath(0, 1, 46)}`)).status).toBe(404);
    expect((await getBytes(`/v1/log/${formatTilePath(0, 1)}`)).status).toBe(404);
    expect((await getBytes(`/v1/log/${formatEntryBundlePath(1)}`)).status).toBe(404);
    expect((await getBytes('/v1/log/tile/0/000.p/256')).status).toBe(400);
    expect((await getBytes('/v1/log/tile/0/0')).status).toBe(400);
  });
});

describe('the checkpoint signer never signs an inconsistent tree', () => {
  it('refuses LOG_INCONSISTENT after a tampered log_nodes row, and signs nothing', async () => {
    const key = await logKey();
    await publishOverHttp(t, manifestBytes('one'));
    const before = await t.registry.store.listCheckpoints();
    const previous = before[before.length - 1]!;
    expect(previous.size).toBe(3); // the key, one's attestation and its bundle leaf
    // Node (1, 0) covers leaves 0..1: the left half of the signed tree of size 3, and of any larger one.
    dropTriggers(t, 'log_nodes_no_update');
    sql(t).prepare('UPDATE log_nodes SET hash = ? WHERE level = 1 AND idx = 0').run(Buffer.alloc(32, 7));
    await t.registry.store.transaction(
      async () => await t.registry.log.appendLeaf('yank', new TextEncoder().encode('{"x":1}')),
    );
    let refusal: unknown;
    try {
      await t.registry.log.signLatestCheckpoint();
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ToolsealError);
    expect((refusal as ToolsealError).code).toBe('LOG_INCONSISTENT');
    expect((refusal as ToolsealError).message).toMatch(/no valid consistency proof from size 3 to 4/);
    expect(await t.registry.store.listCheckpoints()).toEqual(before);
    // What is served is still the last consistent checkpoint.
    const served = verifyCheckpoint(new TextDecoder().decode((await getBytes('/v1/log/checkpoint')).bytes), key);
    expect(served.size).toBe(3);
    expect(Buffer.from(served.rootHash).equals(Buffer.from(parseCheckpoint(bodyOf(previous.note)).rootHash))).toBe(
      true,
    );
    // A publish now fails rather than answering with an unsigned or inconsistent proof.
    const { status, body } = await publishOverHttp(t, manifestBytes('two'));
    expect(status).toBe(500);
    expect(body['code']).toBe('LOG_INCONSISTENT');
    expect(await t.registry.store.listCheckpoints()).toEqual(before);
  });

  it('refuses LOG_INCONSISTENT (not a client error) when the stored tree is smaller than the last signed checkpoint', async () => {
    await publishMany(t, 'r', 3); // size 7, checkpoint 7
    const before = await t.registry.store.listCheckpoints();
    dropTriggers(t, 'log_entries_no_delete', 'log_nodes_no_delete');
    sql(t).prepare('DELETE FROM log_entries WHERE idx >= 2').run();
    sql(t).prepare('DELETE FROM log_nodes WHERE (idx + 1) * (1 << level) > 2').run();
    await t.registry.store.transaction(
      async () => await t.registry.log.appendLeaf('yank', new TextEncoder().encode('{"x":2}')),
    );
    await expect(t.registry.log.signLatestCheckpoint()).rejects.toThrow(
      expect.objectContaining({ code: 'LOG_INCONSISTENT' }),
    );
    expect(await t.registry.store.listCheckpoints()).toEqual(before);
  });
});
