// Group commit: publishes queued in one turn share a transaction and a checkpoint, yet each gets its own answer;
// a failure after a publish began writing rolls the batch back and only that publish fails.

import { afterAll, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import type { PublishOutcome } from '../../src/registry/index.ts';
import { cleanupTempDirs, createTestEnv, manifestBytes, sampleTool, snapshotDb } from '../helpers/registry-helpers.ts';

afterAll(async () => cleanupTempDirs());

async function settle<T>(work: Promise<T>): Promise<{ ok: T } | { error: unknown }> {
  return work.then(
    (ok) => ({ ok }),
    (error: unknown) => ({ error }),
  );
}

function outcomeOf(result: { ok: PublishOutcome } | { error: unknown }): PublishOutcome {
  if (!('ok' in result)) throw new Error(`expected a publish outcome, got ${String(result.error)}`);
  return result.ok;
}

describe('GroupCommitter (the registry on one thread)', () => {
  it('publishes started in one turn share one commit and one signed checkpoint; each proof leads to it', async () => {
    const env = await createTestEnv({ onDisk: true });
    const checkpointsBefore = (await env.store.listCheckpoints()).length;
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, i) => env.registry.publish(manifestBytes({ version: `1.0.${i}` }), env.publisher)),
    );
    expect(outcomes.map((o) => o.created)).toEqual(Array(6).fill(true));
    expect((await env.store.listCheckpoints()).length).toBe(checkpointsBefore + 1);
    const size = (await env.store.latestCheckpoint())!.size;
    expect(new Set(outcomes.map((o) => o.inclusion.size))).toEqual(new Set([size]));
    expect(new Set(outcomes.map((o) => o.record.logIndex)).size).toBe(6);
    await env.close();
  });

  it('a committed batch is answered a few callers per turn of the event loop, so other work runs between its answers', async () => {
    const env = await createTestEnv();
    const events: string[] = [];
    let marked = false;
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        env.registry.publish(manifestBytes({ version: `2.0.${i}` }), env.publisher).then((outcome) => {
          events.push(`answer ${i}`);
          // Work that arrives once the first answer is out (a read, say): it must not wait for all twelve.
          if (!marked) {
            marked = true;
            setImmediate(() => events.push('other work'));
          }
          return outcome;
        }),
      ),
    );
    expect(new Set(outcomes.map((o) => o.inclusion.size)).size).toBe(1);
    expect(events.filter((e) => e.startsWith('answer'))).toHaveLength(12);
    const other = events.indexOf('other work');
    expect(other).toBeGreaterThan(0);
    expect(other).toBeLessThan(events.length - 1);
    await env.close();
  });

  it('one batch mixing new, idempotent and conflicting publishes answers each on its own; the conflict changes nothing', async () => {
    const env = await createTestEnv();
    const first = await env.registry.publish(manifestBytes({ version: '1.0.0' }), env.publisher);
    const other = manifestBytes({ version: '1.0.0', tools: [sampleTool('other')] });
    const results = await Promise.all([
      settle(env.registry.publish(manifestBytes({ version: '1.0.0' }), env.publisher)),
      settle(env.registry.publish(other, env.publisher)),
      settle(env.registry.publish(manifestBytes({ version: '1.1.0' }), env.publisher)),
      // The same new version twice in one batch: the second finds the first's row in the same transaction.
      settle(env.registry.publish(manifestBytes({ version: '1.1.0' }), env.publisher)),
    ]);
    expect(outcomeOf(results[0]!).created).toBe(false);
    expect(outcomeOf(results[0]!).record.id).toBe(first.record.id);
    expect(results[1]).toEqual({ error: expect.objectContaining({ code: 'VERSION_EXISTS', pointer: '/version' }) });
    expect(outcomeOf(results[2]!).created).toBe(true);
    expect(outcomeOf(results[3]!).created).toBe(false);
    expect(outcomeOf(results[3]!).record.id).toBe(outcomeOf(results[2]!).record.id);
    expect(await env.store.getBlob(runPipeline(other).digest)).toBeUndefined();
    expect((await env.store.listVersions('io.github.acme/widgets')).map((v) => v.version)).toEqual(['1.0.0', '1.1.0']);
    // Each new version is two leaves: its attestation and its Sigstore bundle's hashedrekord (issue 26).
    expect(await env.store.getLogSize()).toBe(first.record.logIndex + 4);
    await env.close();
  });

  it('a publish that fails after it began writing: the batch is retried one publish at a time, and only that one fails, storing nothing', async () => {
    const env = await createTestEnv({ onDisk: true });
    const uploads = [0, 1, 2].map((i) => manifestBytes({ version: `2.0.${i}` }));
    const badDigest = runPipeline(uploads[1]!).digest;
    type Blobs = readonly { digest: string; bytes: Uint8Array }[];
    const store = env.store as unknown as { insertBlobsIfAbsent(blobs: Blobs): Promise<void> };
    const insertBlobs = store.insertBlobsIfAbsent.bind(env.store);
    let failures = 0;
    store.insertBlobsIfAbsent = async (blobs) => {
      await insertBlobs(blobs);
      // After the blob rows are written: a partial batch that only a rollback can undo.
      if (blobs.some(({ digest }) => digest === badDigest)) {
        failures++;
        throw new Error('disk on fire');
      }
    };
    const before = snapshotDb(env.store);
    const results = await Promise.all(uploads.map((bytes) => settle(env.registry.publish(bytes, env.publisher))));
    expect(failures).toBe(2); // once in the batch, once alone
    expect(results[1]).toEqual({ error: expect.objectContaining({ message: 'disk on fire' }) });
    expect((results[1] as { error: unknown }).error).not.toBeInstanceOf(ToolsealError);
    const stored = [outcomeOf(results[0]!), outcomeOf(results[2]!)];
    expect(stored.map((o) => o.created)).toEqual([true, true]);
    expect(await env.store.getBlob(badDigest)).toBeUndefined();
    expect(await env.store.getVersion('io.github.acme/widgets', '2.0.1')).toBeUndefined();
    const after = snapshotDb(env.store);
    // Two leaves per stored publish: the attestation and its bundle's hashedrekord (issue 26).
    expect(after.counts['log_entries']).toBe(before.counts['log_entries']! + 4);
    expect(after.counts['manifest_versions']).toBe(before.counts['manifest_versions']! + 2);
    expect(after.counts['blobs']).toBe(before.counts['blobs']! + 2);
    // Every leaf is in a signed checkpoint, and the log has no gap where the failed publish was.
    expect(stored.map((o) => o.record.logIndex).sort()).toEqual([
      before.counts['log_entries']!,
      before.counts['log_entries']! + 2,
    ]);
    expect((await env.store.latestCheckpoint())!.size).toBe(after.counts['log_entries']);
    await env.close();
  });
});
