// Worker modules follow the running module's extension: TypeScript from src/ loads through tsx, JavaScript from
// dist/ loads as it is, with no tsx resolved at all.

import { describe, expect, it } from 'vitest';
import { buildWorkerSource, workerModuleUrl } from '../../src/core/worker-source.ts';
import { startWorkerPool } from '../../src/runtime/worker-thread.ts';
import { throwsWithCode } from '../verify/helpers.ts';

describe('workerModuleUrl', () => {
  it('gives the worker beside the module the extension of that module', () => {
    expect(workerModuleUrl('./pipeline-pool-worker', 'file:///pkg/src/runtime/pipeline-pool.ts').href).toBe(
      'file:///pkg/src/runtime/pipeline-pool-worker.ts',
    );
    expect(workerModuleUrl('./pipeline-pool-worker', 'file:///pkg/dist/runtime/pipeline-pool.js').href).toBe(
      'file:///pkg/dist/runtime/pipeline-pool-worker.js',
    );
  });

  it('refuses a module URL without an extension (INTERNAL)', () => {
    throwsWithCode(() => workerModuleUrl('./worker', 'file:///pkg/bin/toolseal'), 'INTERNAL');
  });
});

describe('buildWorkerSource', () => {
  it('imports a JavaScript module directly, without tsx', () => {
    const source = buildWorkerSource(new URL('file:///pkg/dist/runtime/pipeline-pool-worker.js'));
    expect(source).toContain('import("file:///pkg/dist/runtime/pipeline-pool-worker.js")');
    expect(source).not.toContain('tsx');
  });

  it('loads a TypeScript module through tsx', () => {
    const source = buildWorkerSource(new URL('file:///pkg/src/runtime/pipeline-pool-worker.ts'));
    expect(source).toMatch(/\/node_modules\/tsx\/dist\/esm\/api\/index\.mjs"/);
    expect(source).toContain('tsx.tsImport("file:///pkg/src/runtime/pipeline-pool-worker.ts"');
  });

  it('a pool of plain JavaScript workers starts and answers', async () => {
    const pool = startWorkerPool<number, number>({
      moduleUrl: new URL('./fixtures/doubling-worker.mjs', import.meta.url),
      size: 2,
      role: 'doubling test',
      maxHeapMb: 64,
    });
    try {
      await pool.whenReady();
      expect(await Promise.all([1, 2, 3].map((value) => pool.run(value)))).toEqual([2, 4, 6]);
    } finally {
      await pool.close();
    }
  });
});
