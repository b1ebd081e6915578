// `npm start` as a user runs it: SIGTERM to the npm process (its own pid, not the process group) must stop the
// server gracefully, leaving no process behind and nothing listening (npm run forwards SIGTERM/SIGINT to its child).

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, cleanupTempDirs, makeTempDir, repoRoot } from '../helpers/registry-helpers.ts';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const LISTENING = /toolseal registry listening on (http:\/\/127\.0\.0\.1:\d+)/;

/** Every process below `root` (pid, then its children...), from `ps`. */
function descendantsOf(root: number): number[] {
  const table = execFileSync('ps', ['-A', '-o', 'pid=,ppid='], { encoding: 'utf8' });
  const children = new Map<number, number[]>();
  for (const line of table.split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (pid === undefined || ppid === undefined || Number.isNaN(pid)) continue;
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Processes this file started (npm and everything under it), killed in afterAll if a test left any behind. */
const started: number[] = [];

afterAll(() => {
  for (const pid of started) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  cleanupTempDirs();
});

describe.skipIf(process.platform === 'win32')('npm start', () => {
  it('SIGTERM to the npm pid stops the whole process tree gracefully and frees the port', async () => {
    const root = makeTempDir();
    const env = childEnv({
      TOOLSEAL_DATA: join(root, 'data'),
      TOOLSEAL_KEYS: join(root, 'keys'),
      TOOLSEAL_PORT: '0',
    });
    const child: ChildProcess = spawn(npm, ['start'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(child.pid!);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

    expect(await waitUntil(() => LISTENING.test(stdout), 45_000), `${stdout}\n${stderr}`).toBe(true);
    const url = LISTENING.exec(stdout)![1]!;
    expect(await accepts(url)).toBe(true);
    // The web pages' address is printed, and it answers with the home page.
    expect(stdout).toContain(`  web pages: ${url}/  (`);
    const home = await fetch(`${url}/`);
    expect([home.status, home.headers.get('content-type')]).toEqual([200, expect.stringMatching(/^text\/html/)]);
    const tree = descendantsOf(child.pid!);
    started.push(...tree);
    expect(tree.length).toBeGreaterThan(0);

    process.kill(child.pid!, 'SIGTERM');
    await exited;
    // Every process npm started is gone (none orphaned), the server said it was stopping, and the port is closed.
    expect(await waitUntil(() => tree.every((pid) => !isAlive(pid)), 15_000), `still running: ${tree}`).toBe(true);
    expect(stdout).toContain('SIGTERM received, finishing in-flight requests');
    expect(await accepts(url)).toBe(false);
  }, 90_000);
});
