// The registry's witness client (issue 25 §2; C2SP tlog-witness, tlog-cosignature, tlog-policy): every new signed
// checkpoint is handed to src/witness/submitter.ts, which submits it to each witness of the policy without ever
// holding up a publish; each witness's last cosigned size is kept in `<data>/witness-sizes.json` (atomic writes);
// the verified cosignatures are merged into the checkpoints the HTTP API serves, and /healthz shows each witness.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeBase64Strict } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import type { ServedWitnesses } from '../http/app-env.ts';
import { writeFileAtomic } from '../lock/atomic-file.ts';
import { appendSignatureLines, formatCosignerVkey } from '../log/cosignature.ts';
import { parseNote, parseVerifierString } from '../log/note.ts';
import type { WitnessPolicy } from '../log/policy.ts';
import type { Registry } from '../registry/registry.ts';
import { openKeptCosignatures } from './kept-cosignatures.ts';
import { createWitnessSubmitter, type WitnessSizeStore, type WitnessSubmitter } from '../witness/submitter.ts';

/** The file, in the data folder, holding each witness's last cosigned size ({"<policy name>": size}). */
export const WITNESS_SIZES_FILE = 'witness-sizes.json';

/** How often the latest checkpoint is looked at (it may be signed on the writer thread or by another process). */
const POLL_MS = 100;

export interface RegistryWitnessing extends ServedWitnesses {
  close(): void;
}

export interface WitnessingOptions {
  policy: WitnessPolicy;
  registry: Registry;
  /** The data folder (`:memory:` keeps the sizes in memory only). */
  dataDir: string;
  /** Each witness failure, one line (never blocks anything). */
  onError?: (witness: string, message: string) => void;
  /** Submitter tuning (tests). */
  minIntervalMs?: number;
  timeoutMs?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

/** Start submitting this registry's checkpoints to the policy's witnesses. BAD_REQUEST for a policy of another log. */
export function startWitnessing(options: WitnessingOptions): RegistryWitnessing {
  const { policy, registry } = options;
  const ours = parseVerifierString(registry.log.verifierString);
  const named = policy.logs.some(
    (log) =>
      log.verifier.name === ours.name &&
      log.verifier.keyId === ours.keyId &&
      Buffer.compare(Buffer.from(log.verifier.publicKey), Buffer.from(ours.publicKey)) === 0,
  );
  if (!named)
    throw new ToolsealError(
      'BAD_REQUEST',
      `the witness policy has no log line for this registry's log key (${registry.log.verifierString})`,
    );
  const kept = openKeptCosignatures(policy, registry.log);
  const witnessOrder = new Map([...policy.witnesses.values()].map((w, i) => [`${w.key.name} ${w.key.keyId}`, i]));
  const submitter: WitnessSubmitter = createWitnessSubmitter({
    policy,
    sizes: openSizeStore(options.dataDir),
    // Kept in the store too when other processes share the database, so that they serve them (kept-cosignatures.ts);
    // a registry alone on its database needs no copy (and on SQLite it would take the write lock from the writer).
    onCosigned: (event) => {
      if (registry.sequencingRole === undefined) return;
      registry.log
        .keepCosignature({ size: event.size, witness: event.witness, line: event.line })
        .catch((error: unknown) =>
          options.onError?.(event.witness, error instanceof Error ? error.message : 'keeping a cosignature failed'),
        );
    },
    proveConsistency: async (from, to) =>
      (await registry.log.proveConsistency(from, to)).map((hash) => decodeBase64Strict(hash) as Uint8Array),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
    ...(options.minIntervalMs === undefined ? {} : { minIntervalMs: options.minIntervalMs }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.initialBackoffMs === undefined ? {} : { initialBackoffMs: options.initialBackoffMs }),
    ...(options.maxBackoffMs === undefined ? {} : { maxBackoffMs: options.maxBackoffMs }),
  });
  let submitted = 0;
  const feed = async (): Promise<void> => {
    try {
      const latest = await registry.latestCheckpoint();
      // With several processes on one database, only the sequencer submits (it signed the checkpoint); the others
      // serve the cosignatures it kept.
      if (registry.sequencingRole === 'follower') {
        if (latest) await kept.refresh(latest);
        return;
      }
      if (latest && latest.size > submitted) {
        submitted = latest.size;
        submitter.submit(latest.note);
      }
    } catch (error) {
      options.onError?.('*', error instanceof Error ? error.message : 'reading the latest checkpoint failed');
    }
  };
  void feed();
  const timer = setInterval(() => void feed(), POLL_MS);
  timer.unref();
  const cosigners = [...policy.witnesses.values()].map((w) => ({
    name: w.name,
    vkey: formatCosignerVkey(w.key.name, w.key.publicKey),
  }));
  return {
    cosigners,
    withCosignatures: (note) => {
      const received = submitter.withCosignatures(note).slice(note.length);
      const lines = [...received.split(/(?<=\n)/), ...kept.linesFor(note)];
      return appendInPolicyOrder(note, lines, witnessOrder);
    },
    status: () => submitter.status(),
    close: () => {
      clearInterval(timer);
      submitter.close();
    },
  };
}

/**
 * `note` with one cosignature line per witness key (the first given wins), in the policy's order of witnesses, so
 * that every process serving one log serves the same bytes for one checkpoint.
 */
function appendInPolicyOrder(note: string, lines: readonly string[], order: ReadonlyMap<string, number>): string {
  if (lines.every((line) => line === '')) return note;
  const { body, signatures } = parseNote(note);
  const seen = new Set(signatures.map((s) => `${s.name} ${s.keyId}`));
  const picked: { line: string; rank: number }[] = [];
  for (const line of lines) {
    if (line === '') continue;
    const [signature] = parseNote(`${body}\n${line}`).signatures;
    if (signature === undefined) continue;
    const key = `${signature.name} ${signature.keyId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    picked.push({ line, rank: order.get(key) ?? Number.MAX_SAFE_INTEGER });
  }
  picked.sort((a, b) => a.rank - b.rank);
  return picked.length === 0
    ? note
    : appendSignatureLines(
        note,
        picked.map((p) => p.line),
      );
}

/** Each witness's last cosigned size, in one small JSON file written atomically (temporary file, fsync, rename). */
function openSizeStore(dataDir: string): WitnessSizeStore {
  const sizes = new Map<string, number>();
  if (dataDir === ':memory:')
    return {
      load: async (witness) => sizes.get(witness),
      save: async (witness, size) => {
        sizes.set(witness, size);
      },
    };
  const file = join(dataDir, WITNESS_SIZES_FILE);
  let loaded: Promise<void> | undefined;
  let writing: Promise<void> = Promise.resolve();
  const load = (): Promise<void> =>
    (loaded ??= readFile(file, 'utf8').then(
      (text) => {
        const value: unknown = JSON.parse(text);
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
        for (const [witness, size] of Object.entries(value))
          if (Number.isSafeInteger(size) && (size as number) >= 0) sizes.set(witness, size as number);
      },
      () => undefined, // none yet (or unreadable: the witnesses' 409s tell their sizes again)
    ));
  return {
    load: async (witness) => {
      await load();
      return sizes.get(witness);
    },
    save: async (witness, size) => {
      await load();
      sizes.set(witness, size);
      const text = `${JSON.stringify(Object.fromEntries(sizes), null, 2)}\n`;
      // One write at a time, in order: the last one holds every witness's latest size.
      writing = writing.catch(() => undefined).then(() => writeFileAtomic(file, text, 0o600));
      await writing;
    },
  };
}
