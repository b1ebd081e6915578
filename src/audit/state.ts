// What an auditor remembers between runs: the last verified C2SP tlog-checkpoint and its RFC 6962 frontier (the
// O(log n) right-edge hashes), saved atomically (temporary file, fsync, rename).

import { mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { decodeBase64Strict, equalBytes } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject } from '../core/json.ts';
import { writeFileAtomic } from '../lock/atomic-file.ts';
import { verifyCheckpoint } from '../log/checkpoint.ts';
import { HASH_SIZE } from '../log/merkle.ts';
import { parseVerifierString } from '../log/note.ts';
import { frontierLength, frontierRoot } from './frontier.ts';

/** The `type` of a state file; a change to its meaning is a new version. */
export const AUDIT_STATE_TYPE = 'toolseal.audit-state/v1';

/** What an auditor remembers between runs: O(log n) hashes plus the logged key ids. */
export interface AuditState {
  type: typeof AUDIT_STATE_TYPE;
  /** The registry URL audited (informational: a different URL is only a warning). */
  registry: string;
  /** The log's note verifier string ("<origin>+<key id>+<key>") checkpoints must be signed by. */
  logKey: string;
  /** The checkpoint origin line. */
  origin: string;
  /** Tree size and root (base64) of the last checkpoint that fully passed. */
  size: number;
  rootHash: string;
  /** Base64 hashes of the perfect subtrees on the right edge, largest (leftmost) first: one per set bit of size. */
  frontier: string[];
  /** Every signing key id a key entry in leaves [0, size) introduced, in log order. */
  loggedKids: string[];
  /** The signed checkpoint itself, as evidence (a later fork can be proven with it). */
  checkpoint: string;
  /** When that audit finished (RFC 3339). */
  auditedAt: string;
}

const STRING_FIELDS = ['registry', 'logKey', 'origin', 'rootHash', 'checkpoint', 'auditedAt'] as const;

function refuseState(why: string): never {
  throw new ToolsealError('BAD_REQUEST', `not a valid audit state: ${why}`);
}

function decodeHash(text: unknown, what: string): Uint8Array {
  const bytes = typeof text === 'string' ? decodeBase64Strict(text) : undefined;
  if (bytes === undefined || bytes.byteLength !== HASH_SIZE)
    refuseState(`${what} must be base64 of ${HASH_SIZE} bytes`);
  return bytes;
}

/** The frontier of a parsed state as hashes (parseAuditState checked every one). */
export function decodeFrontier(state: AuditState): Uint8Array[] {
  return state.frontier.map((hash, i) => decodeHash(hash, `frontier[${i}]`));
}

/**
 * Parse and check a state file's text: its checkpoint must verify with its log key and match its size, root
 * and origin, and its frontier must fold to that root. Throws BAD_REQUEST otherwise.
 */
export function parseAuditState(text: string): AuditState {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    refuseState('not JSON');
  }
  if (!isJsonObject(value)) refuseState('not a JSON object');
  if (value['type'] !== AUDIT_STATE_TYPE) refuseState(`type must be ${AUDIT_STATE_TYPE}`);
  for (const field of STRING_FIELDS) {
    if (typeof value[field] !== 'string') refuseState(`${field} must be a string`);
  }
  const s = value as Record<(typeof STRING_FIELDS)[number], string> & Record<string, unknown>;
  const size = s['size'];
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    refuseState('size must be a non-negative safe integer');
  const frontier = s['frontier'];
  if (!Array.isArray(frontier) || frontier.length !== frontierLength(size))
    refuseState('frontier must hold one hash per set bit of size');
  const frontierHashes = frontier.map((hash, i) => decodeHash(hash, `frontier[${i}]`));
  const rootHash = decodeHash(s.rootHash, 'rootHash');
  if (!equalBytes(frontierRoot(frontierHashes), rootHash)) refuseState('frontier does not fold to rootHash');
  const kids = s['loggedKids'];
  if (!Array.isArray(kids) || kids.some((kid) => typeof kid !== 'string'))
    refuseState('loggedKids must be a list of strings');
  checkRememberedCheckpoint(s, size, rootHash);
  return {
    type: AUDIT_STATE_TYPE,
    registry: s.registry,
    logKey: s.logKey,
    origin: s.origin,
    size,
    rootHash: s.rootHash,
    frontier: frontier as string[],
    loggedKids: kids as string[],
    checkpoint: s.checkpoint,
    auditedAt: s.auditedAt,
  };
}

/** The remembered checkpoint vouches for size, root and origin: it must verify with the remembered key. */
function checkRememberedCheckpoint(
  s: { logKey: string; checkpoint: string; origin: string },
  size: number,
  rootHash: Uint8Array,
): void {
  try {
    parseVerifierString(s.logKey);
  } catch {
    refuseState('logKey is not a note verifier string');
  }
  let checkpoint: ReturnType<typeof verifyCheckpoint>;
  try {
    checkpoint = verifyCheckpoint(s.checkpoint, s.logKey);
  } catch {
    refuseState('checkpoint is not a checkpoint signed by logKey');
  }
  if (checkpoint.size !== size || !equalBytes(checkpoint.rootHash, rootHash) || checkpoint.origin !== s.origin) {
    refuseState('size, rootHash and origin must be those of the signed checkpoint');
  }
}

/**
 * Where an auditor remembers a registry by default: one file per registry origin in the user's configuration
 * folder (XDG Base Directory: $XDG_CONFIG_HOME when it is an absolute path, else ~/.config), as
 * `toolseal/audit/<scheme>_<host>_<port>.json`; the host keeps [a-z0-9.-] and %-escapes anything else, so two
 * origins never share a file.
 */
export function defaultAuditStateFile(
  registry: string,
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
): string {
  const xdg = env['XDG_CONFIG_HOME'];
  const configHome = xdg !== undefined && isAbsolute(xdg) ? xdg : join(home, '.config');
  return join(configHome, 'toolseal', 'audit', `${originFileName(registry)}.json`);
}

/** `http://127.0.0.1:8787` → `http_127.0.0.1_8787` (the default port written out). */
function originFileName(registry: string): string {
  const url = new URL(registry);
  const scheme = url.protocol.replace(/:$/, '');
  const port =
    url.port === '' ? ({ 'http:': '80', 'https:': '443' } as Record<string, string>)[url.protocol] : url.port;
  const host = url.hostname.replace(
    /[^a-z0-9.-]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
  return `${scheme}_${host}_${port ?? ''}`;
}

export function formatAuditState(state: AuditState): string {
  return `${JSON.stringify(state, null, 2)}\n`;
}

/** The file's text, or undefined when it does not exist. */
async function readOptionalFile(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Read a state file: undefined when it does not exist; BAD_REQUEST when it is not a valid state. */
export async function readAuditStateFile(file: string): Promise<{ state: AuditState; text: string } | undefined> {
  const text = await readOptionalFile(file);
  return text === undefined ? undefined : { state: parseAuditState(text), text };
}

/**
 * Write `state` atomically (writeFileAtomic: temporary file in the same folder, fsync, rename). `expected` is
 * the text the audit started from (undefined: the file did not exist): if the file changed meanwhile (another
 * audit advanced it), nothing is written and false is returned.
 */
export async function writeAuditStateFile(
  file: string,
  state: AuditState,
  expected: string | undefined,
): Promise<boolean> {
  await mkdir(dirname(file), { recursive: true });
  if ((await readOptionalFile(file)) !== expected) return false;
  await writeFileAtomic(file, formatAuditState(state));
  return true;
}
