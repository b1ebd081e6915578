// Host test helpers: an in-process registry on 127.0.0.1, a tampering proxy ("fake registry"), and refusal capture.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { ToolsealError, type ErrorCode } from '../../src/core/errors.ts';
import type { PublishOutcome, Registry } from '../../src/registry/index.ts';
import { startRegistryServer } from '../../src/server/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';

export const repoRoot = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');

export function manifestFile(name: string): Uint8Array {
  return readFileSync(join(repoRoot, 'manifests', `${name}.json`));
}

/** A manifest file with some top-level members replaced (e.g. another version or description). */
export function manifestVariant(name: string, changes: Record<string, unknown>): Uint8Array {
  const value = JSON.parse(Buffer.from(manifestFile(name)).toString('utf8')) as Record<string, unknown>;
  return Buffer.from(JSON.stringify({ ...value, ...changes }, null, 2));
}

/** The canonical (signed) bytes the pipeline makes of `bytes`. */
export function canonicalOf(bytes: Uint8Array): Uint8Array {
  return runPipeline(bytes).canonicalBytes;
}

export interface TestRegistry {
  url: string;
  registry: Registry;
  keysDir: string;
  /** The bearer token of the io.github.acme publisher. */
  token: string;
  publish(bytes: Uint8Array): Promise<PublishOutcome>;
  /** Yank name@version as the io.github.acme publisher. */
  yank(name: string, version: string, reason: string): Promise<void>;
  close(): Promise<void>;
}

/** A real registry (in-memory SQLite, keys in a temporary folder) served by the real HTTP app on 127.0.0.1. */
export async function startRegistry(origin = 'http://registry.test'): Promise<TestRegistry> {
  const keysDir = mkdtempSync(join(tmpdir(), 'toolseal-host-keys-'));
  const server = await startRegistryServer({
    dataDir: ':memory:',
    keysDir,
    origin,
    port: 0,
    app: { onUnexpectedError: () => undefined },
  });
  const { publisher, token } = await server.registry.createPublisher('io.github.acme');
  return {
    url: server.url,
    registry: server.registry,
    keysDir,
    token,
    publish: (bytes) => server.registry.publish(bytes, publisher),
    yank: async (name, version, reason) => {
      await server.registry.yank(publisher, name, version, reason);
    },
    close: async () => {
      await server.close();
      rmSync(keysDir, { recursive: true, force: true });
    },
  };
}

export interface ProxiedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** What a rewrite returns: a response to send, or 'hang' to never answer. */
export type Rewrite = (
  path: string,
  response: ProxiedResponse,
) => ProxiedResponse | 'hang' | Promise<ProxiedResponse | 'hang'>;

export interface FakeRegistry {
  url: string;
  /** Set per test; undefined passes responses through unchanged. */
  rewrite: Rewrite | undefined;
  /** Paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

const PASSED_HEADERS = ['content-type', 'etag', 'repr-digest', 'cache-control', 'link', 'location'];

/** A tiny node:http server on 127.0.0.1 that proxies `upstream` and lets a test rewrite any response. */
export async function startFakeRegistry(upstream: string): Promise<FakeRegistry> {
  const state: FakeRegistry = { url: '', rewrite: undefined, requests: [], close: async () => undefined };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const path = request.url ?? '/';
      state.requests.push(path);
      const upstreamResponse = await fetch(`${upstream}${path}`, { redirect: 'manual' });
      const headers: Record<string, string> = {};
      for (const name of PASSED_HEADERS) {
        const value = upstreamResponse.headers.get(name);
        if (value !== null) headers[name] = value;
      }
      const original: ProxiedResponse = {
        status: upstreamResponse.status,
        headers,
        body: Buffer.from(await upstreamResponse.arrayBuffer()),
      };
      const rewritten = state.rewrite ? await state.rewrite(path, original) : original;
      if (rewritten === 'hang') return;
      response.writeHead(rewritten.status, {
        ...rewritten.headers,
        'content-length': String(rewritten.body.byteLength),
      });
      response.end(rewritten.body);
    })().catch((error: unknown) => {
      response.writeHead(599, { 'content-type': 'text/plain' });
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

/** Rewrite helper: change the JSON body of responses whose path matches. */
export function jsonBody(response: ProxiedResponse): Record<string, unknown> {
  return JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
}

export function withJson(response: ProxiedResponse, value: unknown): ProxiedResponse {
  return { ...response, body: Buffer.from(JSON.stringify(value)) };
}

/** Await `promise` and assert it rejects with a ToolsealError of `code`; returns the error. */
export async function rejectsWithCode(promise: Promise<unknown>, code: ErrorCode): Promise<ToolsealError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected a ${code} refusal`).toBeInstanceOf(ToolsealError);
  expect({ code: (caught as ToolsealError).code, message: (caught as ToolsealError).message }).toMatchObject({ code });
  return caught as ToolsealError;
}

/** Synchronous variant of rejectsWithCode. */
export function throwsWithCode(run: () => unknown, code: ErrorCode): ToolsealError {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected a ${code} refusal`).toBeInstanceOf(ToolsealError);
  expect({ code: (caught as ToolsealError).code, message: (caught as ToolsealError).message }).toMatchObject({ code });
  return caught as ToolsealError;
}

export function temporaryDirectory(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
