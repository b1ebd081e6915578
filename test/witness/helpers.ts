// Test helpers for witnesses: an in-memory log that signs checkpoints, add-checkpoint bodies, and a real
// `toolseal witness serve` process.

import { spawn, type ChildProcess } from 'node:child_process';
import type { KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';
import {
  computeRootHash,
  createMemoryNodeStore,
  formatAddCheckpointRequest,
  formatCheckpoint,
  formatVerifierString,
  generateConsistencyProof,
  hashLeaf,
  signNote,
} from '../../src/log/index.ts';

export interface TestLog {
  origin: string;
  privateKey: KeyObject;
  vkey: string;
  size(): number;
  append(count: number): void;
  /** The signed checkpoint at the current size (or at `size`). */
  checkpoint(size?: number): string;
  body(size?: number): string;
  proof(from: number, to: number): Uint8Array[];
  /** An add-checkpoint body from `old` to the current size. */
  request(old: number, size?: number): string;
}

export function createTestLog(
  origin = 'log.example/test',
  options: { privateKey?: KeyObject; salt?: string } = {},
): TestLog {
  const privateKey = options.privateKey ?? generateEd25519KeyPair().privateKey;
  const salt = options.salt ?? '';
  const store = createMemoryNodeStore();
  const body = (size = store.size): string =>
    formatCheckpoint({ origin, size, rootHash: computeRootHash(store, size) });
  const checkpoint = (size = store.size): string => signNote(body(size), { name: origin, privateKey });
  const proof = (from: number, to: number): Uint8Array[] =>
    from === 0 || from === to ? [] : generateConsistencyProof(store, from, to);
  return {
    origin,
    privateKey,
    vkey: formatVerifierString(origin, privateKey),
    size: () => store.size,
    append(count) {
      for (let i = 0; i < count; i++)
        store.append(hashLeaf(new TextEncoder().encode(`${origin}${salt} entry ${store.size}`)));
    },
    checkpoint,
    body,
    proof,
    request: (old, size = store.size) =>
      formatAddCheckpointRequest({ oldSize: old, proof: proof(old, size), checkpoint: checkpoint(size) }),
  };
}

const folders: string[] = [];
export function makeFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolseal-witness-'));
  folders.push(dir);
  return dir;
}
export function removeFolders(): void {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
}

const cli = join(import.meta.dirname, '../../src/cli/main.ts');

export function runToolseal(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

export interface WitnessProcess {
  child: ChildProcess;
  url: string;
  vkey: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Start `toolseal witness serve` on 127.0.0.1 (port 0) and wait for its "listening" line. */
export function startWitnessProcess(dataDir: string, logs: readonly string[]): Promise<WitnessProcess> {
  const args = ['witness', 'serve', '--data', dataDir, '--listen', '127.0.0.1:0', ...logs.flatMap((l) => ['--log', l])];
  const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      const vkey = /vkey: (\S+)/.exec(stdout)?.[1];
      if (url && vkey) resolve({ child, url, vkey, exited });
    });
    void exited.then(() => reject(new Error(`witness exited before listening: ${stderr}`)));
  });
}

export async function postCheckpoint(
  url: string,
  body: string,
): Promise<{ status: number; contentType: string | null; text: string }> {
  const response = await fetch(`${url}/add-checkpoint`, { method: 'POST', body });
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
}

export { generateEd25519KeyPair };

export interface WitnessedRegistry {
  url: string;
  logKey: string;
  /** A publisher token of NAMESPACE (test/log-e2e/helpers.ts). */
  token: string;
  /** The policy text: `log`, the live witness W1 and `quorum W1`. */
  policyText: string;
  close(): Promise<void>;
}

/**
 * A real registry server (in process) witnessed by one real in-process `toolseal witness` (W1, quorum W1), with
 * one manifest per name in `names` published and the checkpoint covering them cosigned before it returns.
 */
export async function startWitnessedRegistry(names: readonly string[]): Promise<WitnessedRegistry> {
  const { startRegistryServer } = await import('../../src/server/start-registry-server.ts');
  const { initWitness, startWitnessServer } = await import('../../src/witness/index.ts');
  const { parseWitnessPolicy } = await import('../../src/log/index.ts');
  const { manifestBytes, NAMESPACE } = await import('../log-e2e/helpers.ts');
  const root = makeFolder();
  const dataDir = join(root, 'data');
  const keysDir = join(root, 'keys');
  const first = await startRegistryServer({ dataDir, keysDir, port: 0 });
  const logKey = first.registry.log.verifierString;
  await first.close();
  // A witness key whose base64 holds a '+' (about half of real keys do): every reader of the vkey must split it at
  // its first two '+' only (the web panel once split at every '+' and dropped such witnesses).
  let witnessDir = makeFolder();
  while (!initWitness(witnessDir, 'witness.test/w1').split('+').slice(2).join('+').includes('+'))
    witnessDir = makeFolder();
  const witness = await startWitnessServer({ dataDir: witnessDir, host: '127.0.0.1', port: 0, logs: [logKey] });
  const policyText = `log ${logKey}\nwitness W1 ${witness.vkey} ${witness.url}\nquorum W1\n`;
  const server = await startRegistryServer({
    dataDir,
    keysDir,
    port: 0,
    witnessing: { policy: parseWitnessPolicy(policyText), minIntervalMs: 1, initialBackoffMs: 50, maxBackoffMs: 200 },
  });
  const { token } = await server.registry.createPublisher(NAMESPACE);
  for (const name of names) {
    const response = await fetch(`${server.url}/v1/manifests`, {
      method: 'POST',
      body: manifestBytes(name),
      headers: { Authorization: `Bearer ${token}` },
    });
    if (response.status !== 201) throw new Error(`publish ${name}: ${response.status}`);
  }
  for (let i = 0; i < 200; i++) {
    const note = await (await fetch(`${server.url}/v1/log/checkpoint`)).text();
    if (note.includes(`\n${names.length}\n`) && note.includes('— witness.test/w1 ')) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: server.url,
    logKey,
    token,
    policyText,
    close: async () => {
      await server.close();
      await witness.close();
    },
  };
}
