// Witnesses for the verification tests: three cosigner keys, a 2-of-3 tlog-policy over a test log, and evidence
// whose checkpoint carries the cosignatures asked for.

import type { KeyObject } from 'node:crypto';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';
import {
  appendSignatureLines,
  formatCosignerVkey,
  parseNote,
  parseWitnessPolicy,
  signCosignature,
  type WitnessPolicy,
} from '../../src/log/index.ts';
import type { VerifyFetchedInput } from '../../src/verify/index.ts';
import type { TestLog } from './verifier-fixtures.ts';

export const witnessKeys: { name: string; privateKey: KeyObject }[] = ['w1', 'w2', 'w3'].map((n) => ({
  name: `witness.test/${n}`,
  privateKey: generateEd25519KeyPair().privateKey,
}));

/** `log <key>`, witnesses W1..W3, `group Q 2 W1 W2 W3`, `quorum Q`. */
export function twoOfThreePolicy(logKey: string): WitnessPolicy {
  const witnesses = witnessKeys.map((w, i) => `witness W${i + 1} ${formatCosignerVkey(w.name, w.privateKey)}`);
  return parseWitnessPolicy(`log ${logKey}\n${witnesses.join('\n')}\ngroup Q 2 W1 W2 W3\nquorum Q\n`);
}

/** The evidence for `position` with its checkpoint cosigned by the witnesses at `which` (0-based) at `timestamp`. */
export function cosignedInput(
  log: TestLog,
  position: number,
  which: number[],
  timestamp = 1000,
  size?: number,
): VerifyFetchedInput {
  const input = log.input(position, size);
  const inclusion = input.inclusion as { checkpoint: string };
  const { body } = parseNote(inclusion.checkpoint);
  const lines = which.map((i) =>
    signCosignature(body, witnessKeys[i] as { name: string; privateKey: KeyObject }, timestamp),
  );
  return {
    ...input,
    inclusion: {
      ...(input.inclusion as object),
      checkpoint: appendSignatureLines(inclusion.checkpoint, lines),
    } as VerifyFetchedInput['inclusion'],
  };
}
