// The source of a worker thread's entry (node:worker_threads `new Worker(source, { eval: true })`) and the URL of a
// worker module beside its parent, for every thread toolseal starts (the registry's pools and writer, the PostgreSQL
// store's connection): JavaScript from dist/ is imported as it is, TypeScript from src/ through tsx.

import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ToolsealError } from './errors.ts';

/** Extensions of modules that need tsx to load: a worker module running from src/. */
const TYPESCRIPT_EXTENSION = /\.[cm]?tsx?$/;

/**
 * The URL of the worker module `stem` (a relative path without extension) beside the module at `parentUrl` (its
 * `import.meta.url`), with that module's extension: `.ts` when running from src/ (tsx, vitest), `.js` from dist/.
 */
export function workerModuleUrl(stem: string, parentUrl: string): URL {
  const extension = extname(new URL(parentUrl).pathname);
  if (extension === '') throw new ToolsealError('INTERNAL', `the module ${parentUrl} has no file extension`);
  return new URL(stem + extension, parentUrl);
}

/**
 * Source for `new Worker(source, { eval: true })` that imports the module at `moduleUrl`. JavaScript (dist/) is
 * imported as it is. TypeScript (src/) goes through tsx, whose loader is registered first (Node 20 does not apply
 * --import hooks to a worker's entry module), so tsx is resolved only then. A failed import is rethrown in the
 * worker, so the parent sees an `error` event before any `ready` message.
 */
export function buildWorkerSource(moduleUrl: URL): string {
  const rethrow = '.catch((error) => { process.nextTick(() => { throw error; }); });';
  if (!TYPESCRIPT_EXTENSION.test(moduleUrl.pathname)) return `import(${JSON.stringify(moduleUrl.href)})\n  ${rethrow}`;
  const tsxApi = pathToFileURL(
    join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs'),
  ).href;
  return `import(${JSON.stringify(tsxApi)})
  .then((tsx) => tsx.tsImport(${JSON.stringify(moduleUrl.href)}, ${JSON.stringify(import.meta.url)}))
  ${rethrow}`;
}
