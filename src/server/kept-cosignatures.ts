// Witness cosignatures kept in the store, for every process serving one log (issue 25 §2 on several processes): the
// sequencer saves each cosignature it verified; every process reads those of its latest checkpoint, checks each line
// again (C2SP tlog-cosignature, Ed25519 cosignature/v1) against the policy's witness key, and merges only those.

import { checkCosignatureLine } from '../log/cosignature.ts';
import { parseNote } from '../log/note.ts';
import type { WitnessPolicy } from '../log/policy.ts';
import type { CheckpointRecord, CosignatureRecord } from '../store/index.ts';

/** How many recent checkpoints keep the cosignatures read for them (as the submitter keeps what it receives). */
const KEPT_CHECKPOINTS = 64;

export interface CosignatureSource {
  readCosignatures(size: number): Promise<CosignatureRecord[]>;
}

export interface KeptCosignatures {
  /** Read (again) the kept cosignatures of `checkpoint` unless every witness's is already here. */
  refresh(checkpoint: CheckpointRecord): Promise<void>;
  /** The verified lines read for the checkpoint `note` (none when never read). */
  linesFor(note: string): readonly string[];
}

export function openKeptCosignatures(
  policy: WitnessPolicy,
  source: CosignatureSource,
  options: { now?: () => number; clockSkewSeconds?: number } = {},
): KeptCosignatures {
  const now = options.now ?? Date.now;
  const skew = options.clockSkewSeconds ?? 60;
  const byBody = new Map<string, string[]>();
  const witnessCount = policy.witnesses.size;
  return {
    async refresh(checkpoint) {
      const { body } = parseNote(checkpoint.note);
      if ((byBody.get(body)?.length ?? 0) >= witnessCount) return;
      const verified: string[] = [];
      for (const row of await source.readCosignatures(checkpoint.size)) {
        const line = verifyKeptLine(policy, body, row, now() / 1000 + skew);
        if (line !== undefined) verified.push(line);
      }
      byBody.delete(body);
      byBody.set(body, verified);
      if (byBody.size > KEPT_CHECKPOINTS) byBody.delete(byBody.keys().next().value as string);
    },
    linesFor(note) {
      // A registry alone on its database never reads any: nothing to parse on its checkpoint reads.
      return byBody.size === 0 ? [] : (byBody.get(parseNote(note).body) ?? []);
    },
  };
}

/** The row's line when it is one cosignature, by the policy witness the row names, over `body`; else undefined. */
function verifyKeptLine(
  policy: WitnessPolicy,
  body: string,
  row: CosignatureRecord,
  until: number,
): string | undefined {
  const witness = policy.witnesses.get(row.witness);
  if (witness === undefined) return undefined; // a witness of another policy (changed since): not ours to serve
  let signatures: ReturnType<typeof parseNote>['signatures'];
  try {
    signatures = parseNote(`${body}\n${row.line.endsWith('\n') ? row.line : `${row.line}\n`}`).signatures;
  } catch {
    return undefined;
  }
  const [line] = signatures;
  if (signatures.length !== 1 || line === undefined) return undefined;
  if (line.name !== witness.key.name || line.keyId !== witness.key.keyId) return undefined;
  const checked = checkCosignatureLine(body, line, witness.key, until);
  return checked.status === 'verified' ? (row.line.endsWith('\n') ? row.line : `${row.line}\n`) : undefined;
}
