// The pipeline on worker threads gives exactly what runPipeline gives inline: bytes, digest, refusals.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import { startPipelinePool } from '../../src/runtime/pipeline-pool.ts';
import { startWorkerPool } from '../../src/runtime/worker-thread.ts';
import {
  cleanupTempDirs,
  createTestEnv,
  expectProblem,
  makeManifest,
  manifestBytes,
  postManifest,
  repoRoot,
  sampleTool,
  snapshotDb,
  utf8,
} from '../helpers/registry-helpers.ts';
import { inlinePipeline, type PipelineOutput, type PipelineRunner } from '../../src/registry/pipeline-runner.ts';

const examplesDir = join(repoRoot, 'manifests');
const examples = readdirSync(examplesDir)
  .filter((file) => file.endsWith('.json'))
  .sort();

function withoutManifest(output: PipelineOutput): Record<string, unknown> {
  const { name, version, digest, size, renamedTools } = output;
  return {
    name,
    version,
    digest,
    size,
    renamedTools,
    canonicalBytes: Buffer.from(output.canonicalBytes).toString('hex'),
  };
}

async function refusalOf(run: Promise<unknown>): Promise<ToolsealError> {
  const error = await run.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolsealError);
  return error as ToolsealError;
}

describe('startPipelinePool', () => {
  let pool: PipelineRunner;
  beforeAll(async () => {
    pool = startPipelinePool(2);
    await pool.whenReady();
  });
  afterAll(async () => {
    await pool.close();
    cleanupTempDirs();
  });

  it.each(examples)(
    '%s: the same canonical bytes, digest, size and renamed tools as runPipeline inline',
    async (file) => {
      const bytes = readFileSync(join(examplesDir, file));
      const inline = runPipeline(bytes);
      const pooled = await pool.run(bytes, {});
      expect(withoutManifest(pooled)).toEqual(withoutManifest(inline));
      expect(pooled.canonicalBytes).toBeInstanceOf(Uint8Array);
    },
  );

  it('many jobs at once on two workers: each answer belongs to its own request', async () => {
    const uploads = Array.from({ length: 40 }, (_, i) =>
      manifestBytes({ name: `io.github.acme/tool-${i}`, version: `1.0.${i}` }),
    );
    const outputs = await Promise.all(uploads.map((bytes) => pool.run(bytes, {})));
    outputs.forEach((output, i) => {
      expect(output.name).toBe(`io.github.acme/tool-${i}`);
      expect(output.version).toBe(`1.0.${i}`);
      expect(output.digest).toBe(runPipeline(uploads[i]!).digest);
    });
  });

  it('leaves the caller’s buffer intact (the worker gets a copy)', async () => {
    const bytes = Buffer.from(manifestBytes());
    const before = Buffer.from(bytes);
    await pool.run(bytes, {});
    expect(bytes.byteLength).toBe(before.byteLength);
    expect(bytes.equals(before)).toBe(true);
  });

  it('a refusal keeps its code, pointer and message across the thread boundary', async () => {
    const bytes = utf8('{"name":"io.github.acme/x","name":"io.github.acme/y"}');
    const inline = await refusalOf(inlinePipeline.run(bytes, {}));
    const pooled = await refusalOf(pool.run(bytes, {}));
    expect(inline.code).toBe('DUPLICATE_KEY');
    expect({ code: pooled.code, pointer: pooled.pointer, message: pooled.message }).toEqual({
      code: inline.code,
      pointer: inline.pointer,
      message: inline.message,
    });
  });

  it('applies the limits it is given', async () => {
    const bytes = manifestBytes();
    const refused = await refusalOf(pool.run(bytes, { maxBytes: 16 }));
    expect(refused.code).toBe('TOO_LARGE');
  });

  it('a job that exhausts its worker’s heap fails with INTERNAL, and a fresh worker takes over', async () => {
    const small = startPipelinePool(1, { maxHeapMb: 24 });
    try {
      // About 9 MB of small objects: far more than 24 MiB of heap once parsed (a worker starts in less than 16).
      const tools = Array.from({ length: 36_000 }, (_, i) => sampleTool(`t${i}`, 'x'.repeat(40)));
      const heavy = utf8(JSON.stringify(makeManifest({ tools })));
      const refused = await refusalOf(small.run(heavy, { maxBytes: 16 * 1024 * 1024 }));
      expect(refused.code).toBe('INTERNAL');
      expect((await small.run(manifestBytes(), {})).name).toBe('io.github.acme/widgets');
    } finally {
      await small.close();
    }
  });

  it('workers that cannot start fail every job with INTERNAL instead of being respawned in a loop', async () => {
    // The pool the pipeline runs on, over a module that throws while loading: each worker dies while starting.
    const broken = startWorkerPool<{ bytes: Uint8Array; limits: object }, PipelineOutput>({
      moduleUrl: new URL('../fixtures/unstartable-worker.ts', import.meta.url),
      size: 2,
      role: 'pipeline',
      maxHeapMb: 64,
    });
    try {
      expect((await refusalOf(broken.whenReady())).code).toBe('INTERNAL');
      const first = await refusalOf(broken.run({ bytes: manifestBytes(), limits: {} }));
      expect(first.code).toBe('INTERNAL');
      const later = await refusalOf(broken.run({ bytes: manifestBytes(), limits: {} }));
      expect(later.code).toBe('INTERNAL');
      expect(later.message).toBe('the pipeline workers could not start');
    } finally {
      await broken.close();
    }
  });

  it('refuses a pool without workers', async () => {
    expect(() => startPipelinePool(0)).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
  });

  it('refuses jobs once closed', async () => {
    const closing = startPipelinePool(1);
    await closing.close();
    expect((await refusalOf(closing.run(manifestBytes(), {}))).code).toBe('INTERNAL');
  });
});

describe('a registry publishing through a pipeline pool', () => {
  let pool: PipelineRunner;
  beforeAll(async () => {
    pool = startPipelinePool(1);
  });
  afterAll(async () => {
    await pool.close();
    cleanupTempDirs();
  });

  it('stores and serves the same bytes and digest as an inline registry, and a refusal stores nothing', async () => {
    const pooled = await createTestEnv({ pipeline: pool });
    const inline = await createTestEnv();
    try {
      const upload = readFileSync(join(examplesDir, 'contacts-refs.json'));
      const viaPool = await postManifest(pooled.app, upload, pooled.token);
      const viaInline = await postManifest(inline.app, upload, inline.token);
      expect(viaPool.status).toBe(201);
      expect(viaInline.status).toBe(201);
      const [a, b] = [
        (await viaPool.json()) as { digest: string; size: number },
        (await viaInline.json()) as { digest: string; size: number },
      ];
      expect(a.digest).toBe(b.digest);
      expect(a.size).toBe(b.size);
      const { name, version } = runPipeline(upload);
      const served = await pooled.app.request(`/v1/manifests/${name}/${version}`);
      expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.from(runPipeline(upload).canonicalBytes))).toBe(
        true,
      );

      const before = snapshotDb(pooled.store);
      await expectProblem(
        await postManifest(pooled.app, '{"name":"io.github.acme/x","name":"io.github.acme/y"}', pooled.token),
        'DUPLICATE_KEY',
        '/name',
      );
      expect(snapshotDb(pooled.store)).toEqual(before);
      expect(pooled.unexpectedErrors).toEqual([]);
    } finally {
      await pooled.close();
      await inline.close();
    }
  });

  it('drain() resolves once the publishes in flight have committed', async () => {
    const env = await createTestEnv({ pipeline: pool });
    try {
      const publishes = Array.from({ length: 5 }, (_, i) =>
        env.registry.publish(manifestBytes({ name: 'io.github.acme/drained', version: `2.0.${i}` }), env.publisher),
      );
      await env.registry.drain();
      expect(await env.store.listVersions('io.github.acme/drained')).toHaveLength(5);
      const outcomes = await Promise.all(publishes);
      expect(outcomes.every((outcome) => outcome.created)).toBe(true);
      await env.registry.drain();
    } finally {
      await env.close();
    }
  });
});
