// One server per data folder: `toolseal serve` holds `server.lock` in the data folder, created exclusively (O_EXCL)
// and holding its pid and start time; a second server on the folder refuses to start with DATA_DIR_LOCKED naming the
// holder. A lock whose holder is not a live toolseal server of this folder is stale and taken over: its process is
// gone (a crash, kill -9), is a zombie not yet reaped, or its pid now belongs to a process that started after the lock
// was taken (a reused pid, common in containers without an init; Linux /proc tells both). A graceful stop removes it.
// The administration commands (publisher, keys, fsck) take no lock: they are meant to run beside a server.

import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject } from '../core/json.ts';

export const LOCK_FILE_NAME = 'server.lock';

/** What the lock file holds. */
interface LockHolder {
  pid: number;
  startedAt: string;
}

export interface DataDirLock {
  /** Remove the lock file if it is still this process's (idempotent). */
  release(): void;
}

/** Lock files this process holds (a pid in a lock file equal to ours but not in here is a previous process's). */
const heldByThisProcess = new Set<string>();

/**
 * Take the data folder's lock, or refuse with DATA_DIR_LOCKED naming the process that holds it. `:memory:` needs
 * no lock. The folder is created if needed. Released by `release()`, or at the latest when this process exits.
 */
export function lockDataDir(dataDir: string, clock: () => Date = () => new Date()): DataDirLock {
  if (dataDir === ':memory:') return { release: () => {} };
  mkdirSync(dataDir, { recursive: true });
  const shown = join(dataDir, LOCK_FILE_NAME);
  const file = resolve(shown);
  const holder: LockHolder = { pid: process.pid, startedAt: clock().toISOString() };
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createExclusively(file, `${JSON.stringify(holder)}\n`)) return holdLock(file, holder);
    const existing = readLockFile(file);
    if (existing === 'gone') continue; // released meanwhile: try again
    if (existing === undefined) throw lockedError(dataDir, 'its lock file cannot be read', shown);
    if (isHolderAlive(existing, file)) throw lockedError(dataDir, describeHolder(existing), shown);
    removeIfUnchanged(file, existing);
  }
  throw lockedError(dataDir, 'other servers are starting on it right now', shown);
}

function holdLock(file: string, holder: LockHolder): DataDirLock {
  heldByThisProcess.add(file);
  const release = (): void => {
    process.removeListener('exit', release);
    if (!heldByThisProcess.delete(file)) return;
    const current = readLockFile(file);
    if (typeof current === 'object' && current.pid === holder.pid && current.startedAt === holder.startedAt)
      rmSync(file, { force: true });
  };
  process.once('exit', release);
  return { release };
}

/** Create the lock file with its content, only if there is none (O_CREAT | O_EXCL); false when one exists. */
function createExclusively(file: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o644);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** The holder named in the lock file; 'gone' when there is no file; undefined when it cannot be read as one. */
function readLockFile(file: string): LockHolder | 'gone' | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return (error as { code?: unknown }).code === 'ENOENT' ? 'gone' : undefined;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isJsonObject(parsed)) return undefined;
    const { pid, startedAt } = parsed;
    if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid < 1 || typeof startedAt !== 'string')
      return undefined;
    return { pid, startedAt };
  } catch {
    return undefined;
  }
}

/**
 * Whether the holder still runs as the process that took the lock (a process of another user counts). Our own pid is
 * alive only if we hold it. Where /proc tells (Linux), a zombie is dead, and so is a process that started after the
 * lock was taken: its pid was reused.
 */
function isHolderAlive(holder: LockHolder, file: string): boolean {
  if (holder.pid === process.pid) return heldByThisProcess.has(file);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EPERM') return false;
  }
  const proc = readProcessStatus(holder.pid);
  if (proc === undefined) return true; // no /proc: kill(pid, 0) is all we know
  if (proc.state === 'Z' || proc.state === 'X') return false;
  const lockedAt = Date.parse(holder.startedAt);
  // The start time from /proc has a resolution of a second (boot time) plus a tick: allow 2 s of slack.
  return Number.isNaN(lockedAt) || proc.startedAtMs === undefined || proc.startedAtMs <= lockedAt + 2000;
}

/** Clock ticks per second for /proc/<pid>/stat start times: USER_HZ, 100 on every Linux architecture in use. */
const USER_HZ = 100;

/** A process's state letter and start time (ms since the epoch) from Linux /proc; undefined where there is none. */
export function readProcessStatus(pid: number): { state: string; startedAtMs: number | undefined } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0] ?? '';
  const startTicks = Number(fields[19]);
  const bootSeconds = readBootTimeSeconds();
  const startedAtMs =
    bootSeconds === undefined || !Number.isFinite(startTicks)
      ? undefined
      : bootSeconds * 1000 + (startTicks * 1000) / USER_HZ;
  return { state, startedAtMs };
}

function readBootTimeSeconds(): number | undefined {
  try {
    const match = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Remove a stale lock file, unless another starter replaced it meanwhile (read again just before: a fresh lock of
 * a live process is never removed on the strength of an old reading).
 */
function removeIfUnchanged(file: string, stale: LockHolder): void {
  const again = readLockFile(file);
  if (typeof again !== 'object' || again.pid !== stale.pid || again.startedAt !== stale.startedAt) return;
  rmSync(file, { force: true });
}

function describeHolder(holder: LockHolder): string {
  return `pid ${holder.pid}, started ${holder.startedAt}`;
}

/** The CLI prints it: it names the folder as the operator gave it. */
function lockedError(dataDir: string, holder: string, file: string): ToolsealError {
  return new ToolsealError(
    'DATA_DIR_LOCKED',
    `the data folder ${dataDir} is in use by another toolseal server (${holder}); stop it first or use another ` +
      `--data folder (if no server uses it, remove ${file})`,
  );
}
