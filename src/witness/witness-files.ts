// The witness's data folder: its key (PKCS#8 PEM, mode 0600), its name, and the latest checkpoint it cosigned per log
// origin (C2SP tlog-witness "add-checkpoint": persisted before answering; written atomically: temp, fsync, rename).

// State file format, one log per line after a header: "<size> <base64 root hash> <origin>" (an origin has no control
// characters, so a line holds exactly one; it may hold spaces, so it comes last).

import { createPrivateKey, type KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeBase64Strict, encodeBase64 } from '../core/bytes.ts';
import { generateEd25519KeyPair } from '../core/ed25519-keys.ts';
import { ToolsealError } from '../core/errors.ts';
import type { TreeHead } from '../log/checkpoint.ts';
import { formatCosignerVkey } from '../log/cosignature.ts';
import { HASH_SIZE } from '../log/merkle.ts';
import { isValidKeyName, type NoteSigner } from '../log/note.ts';
import { writeFileAtomic } from '../lock/atomic-file.ts';

const KEY_FILE = 'witness.private.pem';
const NAME_FILE = 'witness.name';
const STATE_FILE = 'witness-state.txt';
const STATE_HEADER = 'toolseal-witness-state v1';

/** Create the witness key in `dataDir` (refused if one exists); returns its vkey (type 0x04). */
export function initWitness(dataDir: string, name: string): string {
  if (!isValidKeyName(name))
    throw new ToolsealError('BAD_REQUEST', `invalid witness name ${JSON.stringify(name)}: no spaces and no '+'`);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const { privateKey } = generateEd25519KeyPair();
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  try {
    writeFileSync(join(dataDir, KEY_FILE), pem, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EEXIST')
      throw new ToolsealError('BAD_REQUEST', 'this folder already holds a witness key; it is never replaced');
    throw error;
  }
  writeFileSync(join(dataDir, NAME_FILE), `${name}\n`, { mode: 0o644 });
  return formatCosignerVkey(name, privateKey);
}

/** The witness's signer (name and private key) from `dataDir`. */
export function loadWitnessSigner(dataDir: string): NoteSigner {
  let pem: string;
  let name: string;
  try {
    pem = readFileSync(join(dataDir, KEY_FILE), 'utf8');
    name = readFileSync(join(dataDir, NAME_FILE), 'utf8').trimEnd();
  } catch (error) {
    throw new ToolsealError('FILE_NOT_FOUND', 'no witness key in the data folder: run `toolseal witness init` first', {
      cause: error,
    });
  }
  const privateKey: KeyObject = createPrivateKey({ key: pem, format: 'pem' });
  if (privateKey.asymmetricKeyType !== 'ed25519' || !isValidKeyName(name))
    throw new ToolsealError('INTERNAL', 'the witness key files are damaged');
  return { name, privateKey };
}

/** The latest cosigned tree head per origin. */
export type WitnessState = Map<string, TreeHead>;

/** Read the state file; an empty state when there is none yet. A damaged file is refused, never reset. */
export function readWitnessState(dataDir: string): WitnessState {
  let text: string;
  try {
    text = readFileSync(join(dataDir, STATE_FILE), 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return new Map();
    throw error;
  }
  const damaged = (): never => {
    throw new ToolsealError('INTEGRITY_ERROR', `the witness state file ${STATE_FILE} is damaged; it is never reset`);
  };
  const lines = text.split('\n');
  if (lines[0] !== STATE_HEADER || lines.at(-1) !== '') damaged();
  const state: WitnessState = new Map();
  for (const line of lines.slice(1, -1)) {
    const match = /^(0|[1-9][0-9]*) ([A-Za-z0-9+/=]+) (.+)$/.exec(line);
    if (!match) damaged();
    const [, sizeText, rootText, origin] = match as unknown as [string, string, string, string];
    const rootHash = decodeBase64Strict(rootText);
    const size = Number(sizeText);
    if (rootHash?.byteLength !== HASH_SIZE || !Number.isSafeInteger(size) || state.has(origin)) damaged();
    state.set(origin, { size, rootHash: rootHash as Uint8Array });
  }
  return state;
}

/** Persist the whole state (atomic and fsynced: after a crash the file is the old state or the new one). */
export async function writeWitnessState(dataDir: string, state: WitnessState): Promise<void> {
  let text = `${STATE_HEADER}\n`;
  for (const [origin, head] of state) text += `${head.size} ${encodeBase64(head.rootHash)} ${origin}\n`;
  await writeFileAtomic(join(dataDir, STATE_FILE), text);
}
