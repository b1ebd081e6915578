// One store contract, run against every store (issue 16 §1): SQLite (:memory: and a file), and PostgreSQL — a real
// server at TOOLSEAL_TEST_DATABASE_URL, else PGlite in process. Bytes round trip exactly; the database refuses to
// rewrite history; one winner among racing same-version inserts; rollback leaves nothing; reads see one snapshot.

import { createHash, randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it as vitestIt } from 'vitest';
import { ToolsealError } from '../../../src/core/errors.ts';
import { buildWorkerSource } from '../../../src/core/worker-source.ts';
import type { CheckpointRecord, Store } from '../../../src/store/index.ts';
import { cleanupTempDirs } from '../../helpers/registry-helpers.ts';
import type { RacerOutcome, RacerSetup } from '../../fixtures/store-racer.ts';
import {
  contractBackends,
  extraPgliteBackend,
  type OpenedBackend,
  openStoreAt,
  type StoreBackend,
} from './store-backends.ts';

afterAll(cleanupTempDirs);

const TIMEOUT = 120_000;
const HISTORY =
  /immutable|append-only|kept forever|yanked once|retired key|stays revoked|stays retired|approval moves only/;

const digestOf = (bytes: Uint8Array): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

async function expectCode(work: Promise<unknown>, code: string): Promise<void> {
  try {
    await work;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolsealError);
    expect((error as ToolsealError).code).toBe(code);
    return;
  }
  expect.fail(`expected ${code}`);
}

/** Everything a store holds, through the port (the same on every backend). */
async function snapshot(store: Store): Promise<string> {
  return JSON.stringify(
    await store.read(async () => ({
      publishers: await store.listPublishers(),
      blobs: await store.listAllBlobs(),
      versions: await store.listAllVersions(),
      keys: await store.listSigningKeys(),
      entries: await store.readLogEntries(0, await store.getLogSize()),
      nodes: await store.listAllLogNodes(),
      checkpoints: await store.listCheckpoints(),
    })),
    (_key, value: unknown) =>
      value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'Buffer'
        ? `hex:${Buffer.from((value as { data: number[] }).data).toString('hex')}`
        : value,
  );
}

/** A publisher, a blob and one version at log index 0 (with its leaf). */
async function seed(store: Store, version = '1.0.0'): Promise<{ publisherId: number; digest: string; bytes: Buffer }> {
  const bytes = Buffer.from(`{"name":"io.github.acme/widgets","version":"${version}"}`);
  const digest = digestOf(bytes);
  return await store.transaction(async () => {
    const publisherId =
      (await store.findPublisherByNamespace('io.github.acme'))?.id ??
      (await store.insertPublisher('io.github.acme', 'a'.repeat(64), '2026-01-01T00:00:00.000Z')).id;
    await store.insertBlobIfAbsent(digest, bytes);
    const index = await store.getLogSize();
    await store.insertLogEntry({
      index,
      kind: 'attestation',
      data: Buffer.from('leaf'),
      leafHash: Buffer.alloc(32, 1),
    });
    await store.insertVersion({
      name: 'io.github.acme/widgets',
      version,
      digest,
      publisherId,
      storedAt: '2026-01-01T00:00:00.000Z',
      attestation: Buffer.from('{"payload":"x"}'),
      kid: 'kid-1',
      logIndex: index,
    });
    return { publisherId, digest, bytes };
  });
}

/** `work` on a freshly opened backend, cleaned up after. */
async function withBackend(backend: StoreBackend, work: (opened: OpenedBackend) => unknown): Promise<void> {
  const opened = await backend.open();
  try {
    await work(opened);
  } finally {
    await opened.cleanup();
  }
}

async function refuses(opened: OpenedBackend, sql: string, params: unknown[] = []): Promise<void> {
  const before = await snapshot(opened.store);
  await expect(opened.raw(sql, params), sql).rejects.toThrow(HISTORY);
  expect(await snapshot(opened.store)).toBe(before);
}

function racer(setup: RacerSetup): { ready: Promise<void>; done: Promise<RacerOutcome[]> } {
  const source = buildWorkerSource(new URL('../../fixtures/store-racer.ts', import.meta.url));
  const worker = new Worker(source, { eval: true, workerData: setup });
  let markReady: () => void = () => {};
  let failReady: (error: unknown) => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  const done = new Promise<RacerOutcome[]>((resolve, reject) => {
    worker.on('message', (message: 'ready' | RacerOutcome[]) => (message === 'ready' ? markReady() : resolve(message)));
    worker.on('error', (error) => {
      failReady(error);
      reject(error);
    });
    worker.on('exit', (code) => reject(new Error(`racer exited with ${code}`)));
  });
  return { ready, done };
}

/**
 * The contract's cases on `backend`; `only` limits them to the cases whose titles start with one of these (the
 * smaller PGlite run beside a real server).
 */
function defineContract(backend: StoreBackend, only?: readonly string[]): void {
  const it = (title: string, test: () => Promise<void>, timeout: number): void => {
    if (only === undefined || only.some((start) => title.startsWith(start))) vitestIt(title, test, timeout);
  };
  it(
    'bytes round trip exactly (every byte value, 1 MiB of random bytes); a digest is stored once',
    () =>
      withBackend(backend, async ({ store }) => {
        const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
        const large = randomBytes(1024 * 1024);
        const empty = Buffer.alloc(0);
        for (const bytes of [every, large, empty]) await store.insertBlobIfAbsent(digestOf(bytes), bytes);
        // A second insert of a stored digest keeps the first bytes.
        await store.insertBlobIfAbsent(digestOf(every), Buffer.from('other'));
        for (const bytes of [every, large, empty]) {
          const blob = (await store.getBlob(digestOf(bytes)))!;
          expect(Buffer.isBuffer(blob.bytes)).toBe(true);
          expect(blob.bytes.equals(bytes)).toBe(true);
          expect(blob.size).toBe(bytes.byteLength);
        }
        expect(await store.getBlob('sha256:missing')).toBeUndefined();
        expect((await store.listAllBlobs()).map((blob) => blob.digest)).toEqual(
          [every, large, empty].map(digestOf).sort((a, b) => (a < b ? -1 : 1)),
        );
      }),
    TIMEOUT,
  );

  it(
    'the database refuses to rewrite bytes, versions, keys, the log and checkpoints (state unchanged)',
    () =>
      withBackend(backend, async (opened) => {
        const { store } = opened;
        const { digest } = await seed(store);
        await store.insertSigningKey({ kid: 'kid-1', publicJwk: '{}', notBefore: 1, notAfter: null, logIndex: 0 });
        await store.insertLogNode(0, 0, Buffer.alloc(32, 1));
        await store.insertCheckpoint({ size: 1, rootHash: Buffer.alloc(32, 1), note: 'n', createdAt: 'now' });
        await refuses(opened, 'UPDATE blobs SET bytes = $1 WHERE digest = $2', [Buffer.from('{}'), digest]);
        await refuses(opened, 'UPDATE blobs SET size = size + 1');
        await refuses(opened, 'DELETE FROM blobs');
        await refuses(opened, "UPDATE manifest_versions SET version = '9.9.9'");
        await refuses(opened, 'UPDATE manifest_versions SET attestation = $1', [Buffer.from('forged')]);
        await refuses(opened, 'DELETE FROM manifest_versions');
        await refuses(opened, 'UPDATE signing_keys SET public_jwk = \'{"x":1}\'');
        await refuses(opened, 'DELETE FROM signing_keys');
        await refuses(opened, 'UPDATE log_entries SET data = $1', [Buffer.from('x')]);
        await refuses(opened, 'DELETE FROM log_entries');
        await refuses(opened, 'UPDATE log_nodes SET hash = $1', [Buffer.alloc(32)]);
        await refuses(opened, 'DELETE FROM log_nodes');
        await refuses(opened, "UPDATE log_checkpoints SET note = 'forged'");
        await refuses(opened, 'DELETE FROM log_checkpoints');
        await refuses(opened, 'DELETE FROM publishers');
        await refuses(opened, "UPDATE publishers SET namespace = 'io.github.evil'");
        if (backend.dialect === 'postgres') {
          for (const table of [
            'blobs',
            'manifest_versions',
            'signing_keys',
            'log_entries',
            'log_nodes',
            'log_checkpoints',
          ])
            await refuses(opened, `TRUNCATE ${table} CASCADE`);
        }
        expect(await store.checkStructure()).toEqual([]);
      }),
    TIMEOUT,
  );

  it(
    'yank moves active → yanked once: never back, never re-yanked',
    () =>
      withBackend(backend, async (opened) => {
        const { store } = opened;
        await seed(store);
        const row = (await store.getVersion('io.github.acme/widgets', '1.0.0'))!;
        expect(row.status).toBe('active');
        await refuses(opened, "UPDATE manifest_versions SET yank_reason = 'sneaky'");
        await store.transaction(async () => await store.markYanked(row.id, 'broken', '2026-02-01T00:00:00.000Z', 7));
        expect(await store.getVersion('io.github.acme/widgets', '1.0.0')).toMatchObject({
          status: 'yanked',
          yankReason: 'broken',
          yankedAt: '2026-02-01T00:00:00.000Z',
          yankLogIndex: 7,
        });
        const before = await snapshot(store);
        await expect(store.markYanked(row.id, 'again', '2026-03-01T00:00:00.000Z', 8)).rejects.toThrow(HISTORY);
        expect(await snapshot(store)).toBe(before);
        await refuses(opened, "UPDATE manifest_versions SET status = 'active'");
        await expect(opened.raw("UPDATE manifest_versions SET status = 'deleted'")).rejects.toThrow();
      }),
    TIMEOUT,
  );

  it(
    'versions: VERSION_EXISTS for name@version; latest digest; by digest with the publisher; names searched and paged',
    () =>
      withBackend(backend, async ({ store }) => {
        const first = await seed(store, '1.0.0');
        const second = await seed(store, '2.0.0');
        const row = (await store.getVersion('io.github.acme/widgets', '1.0.0'))!;
        expect(row.attestation.equals(Buffer.from('{"payload":"x"}'))).toBe(true);
        await expectCode(
          store.transaction(async () => await store.insertVersion({ ...row, logIndex: 99 })),
          'VERSION_EXISTS',
        );
        expect(await store.getLatestStoredDigest('io.github.acme/widgets')).toBe(second.digest);
        expect((await store.listVersions('io.github.acme/widgets')).map((v) => v.version)).toEqual(['1.0.0', '2.0.0']);
        expect(await store.listVersionsByDigest(first.digest)).toEqual([{ ...row, publisher: 'io.github.acme' }]);
        await expect(
          store.transaction(
            async () => await store.insertVersion({ ...row, version: '3.0.0', digest: 'sha256:none', logIndex: 98 }),
          ),
        ).rejects.toThrow();
        // Names in byte order ('-' < '.' < '/' < 'a'), paged, and searched in descriptions and tools (ASCII case-folded).
        const manifest = (name: string, extra: object): Buffer =>
          Buffer.from(JSON.stringify({ name, version: '1.0.0', ...extra }));
        const rows: [string, object][] = [
          ['io.github.acme/a-b', { tools: [{ name: 'lookup', description: 'Refund 100% of a CHARGE' }] }],
          ['io.github.acme/a.b', { description: 'Weather_now' }],
          ['io.github.acme/ab', { description: 'nothing \u0000 here', tools: [{ name: 't', title: 'Weather Title' }] }],
        ];
        await store.transaction(async () => {
          for (const [name, extra] of rows) {
            const bytes = manifest(name, extra);
            await store.insertBlobIfAbsent(digestOf(bytes), bytes);
            const index = await store.getLogSize();
            await store.insertLogEntry({
              index,
              kind: 'attestation',
              data: Buffer.from(name),
              leafHash: Buffer.alloc(32),
            });
            await store.insertVersion({ ...row, name, digest: digestOf(bytes), logIndex: index });
          }
        });
        const all = ['io.github.acme/a-b', 'io.github.acme/a.b', 'io.github.acme/ab', 'io.github.acme/widgets'];
        expect(await store.listManifestNames(undefined, undefined, 10)).toEqual(all);
        expect(await store.listManifestNames(undefined, 'io.github.acme/a-b', 2)).toEqual(all.slice(1, 3));
        expect(await store.listManifestNames('charge', undefined, 10)).toEqual(['io.github.acme/a-b']);
        expect(await store.listManifestNames('100%', undefined, 10)).toEqual(['io.github.acme/a-b']);
        expect(await store.listManifestNames('r_n', undefined, 10)).toEqual(['io.github.acme/a.b']);
        expect(await store.listManifestNames('WEATHER', undefined, 10)).toEqual([
          'io.github.acme/a.b',
          'io.github.acme/ab',
        ]);
        expect(await store.listManifestNames('A.B', undefined, 10)).toEqual(['io.github.acme/a.b']);
        expect(await store.listManifestNames('zzz', undefined, 10)).toEqual([]);
      }),
    TIMEOUT,
  );

  it(
    'a rolled-back transaction leaves nothing; a failed nested one only undoes itself',
    () =>
      withBackend(backend, async ({ store }) => {
        await seed(store);
        const before = await snapshot(store);
        await expect(
          store.transaction(async () => {
            await store.insertBlobIfAbsent('sha256:gone', Buffer.from('gone'));
            await store.insertLogEntry({ index: 1, kind: 'yank', data: Buffer.from('y'), leafHash: Buffer.alloc(32) });
            await store.insertCheckpoint({ size: 2, rootHash: Buffer.alloc(32), note: 'n', createdAt: 'now' });
            throw new Error('changed my mind');
          }),
        ).rejects.toThrow('changed my mind');
        expect(await snapshot(store)).toBe(before);
        await store.transaction(async () => {
          await store.insertBlobIfAbsent('sha256:kept', Buffer.from('kept'));
          await expect(
            store.transaction(async () => {
              await store.insertBlobIfAbsent('sha256:inner', Buffer.from('inner'));
              throw new Error('inner');
            }),
          ).rejects.toThrow('inner');
        });
        expect((await store.getBlob('sha256:kept'))?.bytes.toString()).toBe('kept');
        expect(await store.getBlob('sha256:inner')).toBeUndefined();
      }),
    TIMEOUT,
  );

  it(
    'the log: leaves and nodes append and read back; an index or node used twice is refused',
    () =>
      withBackend(backend, async ({ store }) => {
        expect(await store.getLogSize()).toBe(0);
        await store.transaction(async () => {
          for (let index = 0; index < 5; index++) {
            await store.insertLogEntry({
              index,
              kind: index === 3 ? 'key' : 'attestation',
              data: Buffer.from([index, 0, 255]),
              leafHash: Buffer.alloc(32, index),
            });
            await store.insertLogNode(0, index, Buffer.alloc(32, index));
          }
          await store.insertLogNode(1, 0, Buffer.alloc(32, 9));
        });
        expect(await store.getLogSize()).toBe(5);
        expect(await store.readLogEntries(1, 3)).toEqual([
          { index: 1, kind: 'attestation', data: Buffer.from([1, 0, 255]), leafHash: Buffer.alloc(32, 1) },
          { index: 2, kind: 'attestation', data: Buffer.from([2, 0, 255]), leafHash: Buffer.alloc(32, 2) },
        ]);
        expect((await store.readLogEntries(3, 4))[0]?.kind).toBe('key');
        expect((await store.readLogNode(1, 0))?.equals(Buffer.alloc(32, 9))).toBe(true);
        expect(await store.readLogNode(1, 1)).toBeUndefined();
        expect((await store.listAllLogNodes()).map(({ level, index }) => [level, index])).toEqual([
          [0, 0],
          [0, 1],
          [0, 2],
          [0, 3],
          [0, 4],
          [1, 0],
        ]);
        const before = await snapshot(store);
        await expect(
          store.transaction(
            async () =>
              await store.insertLogEntry({
                index: 2,
                kind: 'attestation',
                data: Buffer.from('x'),
                leafHash: Buffer.alloc(32),
              }),
          ),
        ).rejects.toThrow();
        await expect(
          store.transaction(async () => await store.insertLogNode(1, 0, Buffer.alloc(32))),
        ).rejects.toThrow();
        expect(await snapshot(store)).toBe(before);
      }),
    TIMEOUT,
  );

  it(
    'checkpoints: in size order, the latest by size; a size signed twice (another root) is refused',
    () =>
      withBackend(backend, async ({ store }) => {
        expect(await store.latestCheckpoint()).toBeUndefined();
        const at = (size: number, fill: number): CheckpointRecord => ({
          size,
          rootHash: Buffer.alloc(32, fill),
          note: `note ${size}\n`,
          createdAt: `2026-01-0${size}T00:00:00.000Z`,
        });
        await store.transaction(async () => {
          await store.insertCheckpoint(at(3, 3));
          await store.insertCheckpoint(at(1, 1));
        });
        expect(await store.latestCheckpoint()).toEqual(at(3, 3));
        expect(await store.listCheckpoints()).toEqual([at(1, 1), at(3, 3)]);
        await expect(store.transaction(async () => await store.insertCheckpoint(at(3, 4)))).rejects.toThrow();
        expect(await store.listCheckpoints()).toEqual([at(1, 1), at(3, 3)]);
      }),
    TIMEOUT,
  );

  it(
    "a publish batch's round trips: versions and latest digests read, blobs and versions written, several at once",
    () =>
      withBackend(backend, async ({ store }) => {
        const first = await seed(store, '1.0.0');
        const name = 'io.github.acme/widgets';
        const bytesOf = (text: string) => Buffer.from(text);
        const blobs = ['{"a":1}', '{"b":2}', '{"a":1}'].map((text) => ({
          digest: digestOf(bytesOf(text)),
          bytes: bytesOf(text),
        }));
        await store.transaction(async () => await store.insertBlobsIfAbsent(blobs));
        await store.insertBlobsIfAbsent([{ digest: first.digest, bytes: bytesOf('other bytes') }]);
        expect((await store.getBlob(first.digest))!.bytes.equals(first.bytes)).toBe(true);
        expect((await store.getBlob(blobs[1]!.digest))!.bytes.equals(bytesOf('{"b":2}'))).toBe(true);
        expect((await store.listAllBlobs()).length).toBe(3);

        const row = (version: string, digest: string, logIndex: number) => ({
          name: version === '9.0.0' ? 'io.github.acme/other' : name,
          version,
          digest,
          publisherId: first.publisherId,
          storedAt: '2026-02-01T00:00:00.000Z',
          attestation: Buffer.from(`{"payload":"${version}"}`),
          kid: 'kid-1',
          logIndex,
        });
        const rows = [row('2.0.0', blobs[0]!.digest, 10), row('9.0.0', blobs[1]!.digest, 11)];
        const inserted = await store.transaction(async () => await store.insertVersions(rows));
        expect(inserted.map(({ id: _id, ...rest }) => rest)).toEqual(
          rows.map((r) => ({ ...r, status: 'active', yankReason: null, yankedAt: null, yankLogIndex: null })),
        );
        for (const version of inserted) expect(await store.getVersion(version.name, version.version)).toEqual(version);
        const read = await store.getVersions([
          { name, version: '2.0.0' },
          { name, version: '1.0.0' },
          { name, version: '7.7.7' },
          { name: 'io.github.acme/other', version: '9.0.0' },
        ]);
        expect(read.map((v) => `${v.name}@${v.version}`).sort()).toEqual([
          'io.github.acme/other@9.0.0',
          `${name}@1.0.0`,
          `${name}@2.0.0`,
        ]);
        expect(await store.getVersions([])).toEqual([]);
        expect(await store.getLatestStoredDigests([name, 'io.github.acme/other', 'io.github.acme/none', name])).toEqual(
          new Map([
            [name, blobs[0]!.digest],
            ['io.github.acme/other', blobs[1]!.digest],
          ]),
        );
        // One row already stored, or one name@version twice: VERSION_EXISTS, and nothing of the batch stays.
        const before = await snapshot(store);
        await expectCode(
          store.transaction(
            async () => await store.insertVersions([row('3.0.0', first.digest, 12), row('2.0.0', first.digest, 13)]),
          ),
          'VERSION_EXISTS',
        );
        await expectCode(
          store.transaction(
            async () => await store.insertVersions([row('4.0.0', first.digest, 14), row('4.0.0', first.digest, 15)]),
          ),
          'VERSION_EXISTS',
        );
        expect(await snapshot(store)).toBe(before);
      }),
    TIMEOUT,
  );

  it(
    'witness cosignatures: kept per size and witness, a witness cosigning a size again replaces its line',
    () =>
      withBackend(backend, async ({ store }) => {
        expect(await store.listCosignatures(5)).toEqual([]);
        await store.saveCosignature({ size: 5, witness: 'W2', line: '— w2 AAAA\n' });
        await store.saveCosignature({ size: 5, witness: 'W1', line: '— w1 BBBB\n' });
        await store.saveCosignature({ size: 6, witness: 'W1', line: '— w1 CCCC\n' });
        await store.saveCosignature({ size: 5, witness: 'W2', line: '— w2 DDDD\n' });
        expect(await store.listCosignatures(5)).toEqual([
          { size: 5, witness: 'W1', line: '— w1 BBBB\n' },
          { size: 5, witness: 'W2', line: '— w2 DDDD\n' },
        ]);
        expect(await store.listCosignatures(6)).toEqual([{ size: 6, witness: 'W1', line: '— w1 CCCC\n' }]);
        expect(await store.listCosignatures(7)).toEqual([]);
      }),
    TIMEOUT,
  );

  it(
    'keys: the active one; retired once; ordered by notBefore',
    () =>
      withBackend(backend, async ({ store }) => {
        expect(await store.activeSigningKid()).toBeUndefined();
        await store.insertSigningKey({
          kid: 'old',
          publicJwk: '{"k":"old"}',
          notBefore: 1_700_000_000,
          notAfter: null,
          logIndex: null,
        });
        await store.transaction(async () => {
          await store.retireSigningKey('old', 1_800_000_000);
          await store.insertSigningKey({
            kid: 'new',
            publicJwk: '{"k":"new"}',
            notBefore: 1_800_000_000,
            notAfter: null,
            logIndex: 4,
          });
        });
        expect(await store.activeSigningKid()).toBe('new');
        expect(await store.listSigningKeys()).toEqual([
          { kid: 'old', publicJwk: '{"k":"old"}', notBefore: 1_700_000_000, notAfter: 1_800_000_000, logIndex: null },
          { kid: 'new', publicJwk: '{"k":"new"}', notBefore: 1_800_000_000, notAfter: null, logIndex: 4 },
        ]);
        await expect(store.retireSigningKey('old', 1_900_000_000)).rejects.toThrow(HISTORY);
        await expect(
          store.insertSigningKey({ kid: 'new', publicJwk: '{}', notBefore: 1, notAfter: null, logIndex: null }),
        ).rejects.toThrow();
        expect((await store.listSigningKeys())[0]?.notAfter).toBe(1_800_000_000);
      }),
    TIMEOUT,
  );

  it(
    'publishers: case-insensitive namespaces (NAMESPACE_TAKEN), lookups, revoked once, no new token once revoked',
    () =>
      withBackend(backend, async ({ store }) => {
        const created = await store.insertPublisher('io.github.acme', 'hash-a', '2026-01-01T00:00:00.000Z');
        expect(created).toMatchObject({ namespace: 'io.github.acme', tokenHash: 'hash-a', revokedAt: null });
        await expectCode(store.insertPublisher('IO.GitHub.Acme', 'hash-b', 'now'), 'NAMESPACE_TAKEN');
        await expectCode(
          store.transaction(async () => await store.insertPublisher('io.github.acme', 'hash-c', 'now')),
          'NAMESPACE_TAKEN',
        );
        const other = await store.insertPublisher('io.github.other', 'hash-d', '2026-01-02T00:00:00.000Z');
        expect(await store.countPublishers()).toBe(2);
        expect((await store.findPublisherByNamespace('Io.GitHub.ACME'))?.id).toBe(created.id);
        expect((await store.findPublisherByTokenHash('hash-d'))?.namespace).toBe('io.github.other');
        expect((await store.findPublisherById(created.id))?.namespace).toBe('io.github.acme');
        expect(await store.findPublisherByTokenHash('nope')).toBeUndefined();
        await store.replacePublisherTokenHash(created.id, 'hash-rotated');
        expect(await store.findPublisherByTokenHash('hash-a')).toBeUndefined();
        await store.revokePublisher(other.id, '2026-03-01T00:00:00.000Z');
        expect((await store.listPublishers()).map((p) => [p.namespace, p.tokenHash, p.revokedAt ?? null])).toEqual([
          ['io.github.acme', 'hash-rotated', null],
          ['io.github.other', 'hash-d', '2026-03-01T00:00:00.000Z'],
        ]);
        await expect(store.replacePublisherTokenHash(other.id, 'hash-new')).rejects.toThrow(HISTORY);
        await expect(store.revokePublisher(other.id, '2027-01-01T00:00:00.000Z')).rejects.toThrow(HISTORY);
      }),
    TIMEOUT,
  );

  it(
    'principals and approvals: unique per kind, revoked once; pending → approved → consumed, each once; listed newest first',
    () =>
      withBackend(backend, async (opened) => {
        const { store } = opened;
        const host = await store.insertPrincipal('host', 'ci-runner', 'host-hash', '2026-01-01T00:00:00.000Z');
        const operator = await store.insertPrincipal('operator', 'alice', 'op-hash', '2026-01-01T00:00:00.000Z');
        expect((await store.insertPrincipal('operator', 'ci-runner', 'op2-hash', 'now')).kind).toBe('operator');
        await expectCode(store.insertPrincipal('host', 'ci-runner', 'other-hash', 'now'), 'NAMESPACE_TAKEN');
        expect((await store.findPrincipalByTokenHash('op-hash'))?.name).toBe('alice');
        expect((await store.findPrincipal('host', 'ci-runner'))?.id).toBe(host.id);
        expect((await store.findPrincipalById(operator.id))?.kind).toBe('operator');
        expect((await store.listPrincipals('operator')).map((p) => p.name)).toEqual(['alice', 'ci-runner']);
        const ask = (id: string, createdAt: string, expiresAt: string) => ({
          id,
          hostId: host.id,
          audience: 'ci-runner',
          manifestName: 'io.github.acme/widgets',
          manifestVersion: '1.0.0',
          tool: 'refund',
          digest: 'sha256:action',
          envelope: Buffer.from([0, 123, 255]),
          salt: Buffer.alloc(32, 7),
          createdAt,
          expiresAt,
        });
        await store.insertApproval(ask('apr_1', '2026-01-01T00:00:00.000Z', '2026-01-01T00:15:00.000Z'));
        await store.insertApproval(ask('apr_2', '2026-01-01T00:01:00.000Z', '2026-01-01T00:16:00.000Z'));
        await store.insertApproval(ask('apr_3', '2026-01-01T00:01:00.000Z', '2026-01-01T00:02:00.000Z'));
        const now = '2026-01-01T00:05:00.000Z';
        expect(await store.getApproval('apr_1')).toMatchObject({
          status: 'pending',
          envelope: Buffer.from([0, 123, 255]),
        });
        expect((await store.findStandingApproval(host.id, 'sha256:action', now))?.id).toBe('apr_2');
        const decision = { decidedById: operator.id, decidedAt: now, reason: 'ok', logIndex: 5 };
        expect(await store.decideApproval('apr_1', { status: 'approved', ...decision })).toBe(true);
        expect(await store.decideApproval('apr_1', { status: 'denied', ...decision })).toBe(false);
        expect(await store.getApproval('apr_1')).toMatchObject({
          status: 'approved',
          decidedBy: 'alice',
          decisionLogIndex: 5,
        });
        expect(await store.consumeApproval('apr_2', now, 6)).toBe(false);
        expect(await store.consumeApproval('apr_1', now, 6)).toBe(true);
        expect(await store.consumeApproval('apr_1', now, 7)).toBe(false);
        expect((await store.listApprovals({ now, limit: 10 })).map((a) => a.id)).toEqual(['apr_3', 'apr_2', 'apr_1']);
        expect((await store.listApprovals({ status: 'expired', now, limit: 10 })).map((a) => a.id)).toEqual(['apr_3']);
        expect((await store.listApprovals({ status: 'pending', now, limit: 10 })).map((a) => a.id)).toEqual(['apr_2']);
        expect((await store.listApprovals({ status: 'consumed', now, limit: 1 })).map((a) => a.id)).toEqual(['apr_1']);
        expect((await store.listAllApprovals()).map((a) => a.id)).toEqual(['apr_1', 'apr_2', 'apr_3']);
        // A denied request still stands for an identical one until it expires (a denial is sticky); a consumed one not.
        expect(await store.decideApproval('apr_2', { status: 'denied', ...decision })).toBe(true);
        expect(await store.findStandingApproval(host.id, 'sha256:action', now)).toMatchObject({
          id: 'apr_2',
          status: 'denied',
        });
        expect(await store.findStandingApproval(host.id, 'sha256:action', '2026-01-01T00:16:00.000Z')).toBeUndefined();
        await refuses(opened, "UPDATE approvals SET status = 'pending' WHERE id = 'apr_1'");
        await refuses(opened, 'UPDATE approvals SET envelope = $1', [Buffer.from('forged')]);
        await refuses(opened, 'DELETE FROM approvals');
        await refuses(opened, "UPDATE principals SET name = 'mallory'");
        await store.revokePrincipal(host.id, now);
        await expect(store.revokePrincipal(host.id, '2027-01-01T00:00:00.000Z')).rejects.toThrow(HISTORY);
        expect((await store.findPrincipalById(host.id))?.revokedAt).toBe(now);
      }),
    TIMEOUT,
  );

  it(
    'a read sees one snapshot while another connection commits; two racing writers: one winner per version',
    () =>
      withBackend(backend, async ({ store, location }) => {
        const { publisherId, digest } = await seed(store);
        if (location === undefined) {
          // One connection only (:memory: SQLite, PGlite): the same version twice from it, one winner.
          await expectCode(seed(store), 'VERSION_EXISTS');
          expect(await store.listAllVersions()).toHaveLength(1);
          return;
        }
        const other = await openStoreAt(location);
        try {
          const [before, during] = await store.read(async () => {
            const first = await store.countPublishers();
            await other.insertPublisher('io.github.other', 'hash-other', 'now');
            return [first, await store.countPublishers()];
          });
          expect([before, during]).toEqual([1, 1]);
          expect(await store.countPublishers()).toBe(2);
        } finally {
          await other.close();
        }
        const versions = Array.from({ length: 12 }, (_, i) => `3.${i}.0`);
        const start = new Int32Array(new SharedArrayBuffer(4));
        const racers = [0, 1].map((n) => racer({ location, publisherId, digest, versions, start, racer: n + 1 }));
        await Promise.all(racers.map((r) => r.ready));
        Atomics.store(start, 0, 1);
        Atomics.notify(start, 0);
        const [a, b] = await Promise.all(racers.map((r) => r.done));
        versions.forEach((_, i) => {
          expect([a![i], b![i]].sort()).toEqual(['VERSION_EXISTS', 'created']);
        });
        const raced = await store.listVersions('io.github.acme/race');
        expect(raced.map((v) => v.version).sort()).toEqual([...versions].sort());
        // Every winner's leaf is the one at its log index, and the log has no gap and no loser's leaf.
        const entries = await store.readLogEntries(0, await store.getLogSize());
        expect(entries.map((e) => e.index)).toEqual(entries.map((_, i) => i));
        expect(entries).toHaveLength(1 + versions.length);
        for (const v of raced) expect(entries[v.logIndex]!.data.equals(v.attestation)).toBe(true);
      }),
    TIMEOUT,
  );
}

describe.each(contractBackends)('the store contract on $name', (backend) => defineContract(backend));

if (extraPgliteBackend !== undefined) {
  const pglite = extraPgliteBackend;
  describe('the store contract on pglite too (beside the server)', () =>
    defineContract(pglite, ['bytes round trip', 'the database refuses', 'a rolled-back']));
}
