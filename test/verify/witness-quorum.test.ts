// Host quorum (C2SP tlog-policy): verifyFetched and createVerifier with a witness policy refuse a checkpoint without
// the quorum (WITNESS_QUORUM), ignore cosignatures from the future, refuse a bad cosignature and a log outside the
// policy, and a Verifier checks a checkpoint's quorum once.

import { describe, expect, it } from 'vitest';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';
import { formatVerifierString } from '../../src/log/index.ts';
import { createVerifier, verifyFetched } from '../../src/verify/index.ts';
import { ORIGIN } from './stage-fixtures.ts';
import { buildTestLog } from './verifier-fixtures.ts';
import { cosignedInput, twoOfThreePolicy, witnessKeys } from './witness-quorum-fixtures.ts';

const log = buildTestLog(3);
const witnessPolicy = twoOfThreePolicy(log.logKey);

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

describe('verifyFetched with a witness policy', () => {
  it('accepts 2 of 3 cosignatures and refuses 1 with WITNESS_QUORUM', () => {
    expect(verifyFetched({ ...cosignedInput(log, 0, [0, 2]), witnessPolicy, nowSeconds: 2000 }).logIndex).toBe(
      log.versions[0]?.index,
    );
    expect(codeOf(() => verifyFetched({ ...cosignedInput(log, 0, [1]), witnessPolicy, nowSeconds: 2000 }))).toBe(
      'WITNESS_QUORUM',
    );
    expect(codeOf(() => verifyFetched({ ...log.input(0), witnessPolicy, nowSeconds: 2000 }))).toBe('WITNESS_QUORUM');
    // Without a policy the same uncosigned evidence verifies.
    expect(verifyFetched(log.input(0)).logIndex).toBe(log.versions[0]?.index);
  });

  it('ignores cosignatures stamped in the future', () => {
    expect(
      codeOf(() => verifyFetched({ ...cosignedInput(log, 1, [0, 1], 5000), witnessPolicy, nowSeconds: 4999 })),
    ).toBe('WITNESS_QUORUM');
    expect(verifyFetched({ ...cosignedInput(log, 1, [0, 1], 5000), witnessPolicy, nowSeconds: 5000 }).name).toBe(
      verifyFetched(log.input(1)).name,
    );
  });

  it('refuses a cosignature that does not verify, and a log key the policy does not list', () => {
    const good = cosignedInput(log, 0, [0, 1]);
    const checkpoint = (good.inclusion as { checkpoint: string }).checkpoint;
    const lines = checkpoint.split('\n');
    const last = lines.length - 2; // the second cosignature line
    const line = lines[last] as string;
    const sigStart = line.lastIndexOf(' ') + 1 + 16; // inside the signature bytes, after key ID and timestamp
    lines[last] = `${line.slice(0, sigStart)}${line[sigStart] === 'A' ? 'B' : 'A'}${line.slice(sigStart + 1)}`;
    const tampered = { ...good, inclusion: { ...(good.inclusion as object), checkpoint: lines.join('\n') } };
    expect(codeOf(() => verifyFetched({ ...(tampered as typeof good), witnessPolicy, nowSeconds: 2000 }))).toBe(
      'WITNESS_QUORUM',
    );
    const otherPolicy = twoOfThreePolicy(formatVerifierString(ORIGIN, generateEd25519KeyPair().privateKey));
    expect(codeOf(() => verifyFetched({ ...good, witnessPolicy: otherPolicy, nowSeconds: 2000 }))).toBe(
      'WITNESS_QUORUM',
    );
    expect(witnessKeys).toHaveLength(3);
  });
});

describe('createVerifier with a witness policy', () => {
  it('applies the policy to every call, and a call may not drop below it', () => {
    const verifier = createVerifier({ logKey: log.logKey, jwks: log.input(0).jwks, witnessPolicy });
    expect(verifier.verifyFetched({ ...cosignedInput(log, 0, [0, 1]), nowSeconds: 2000 }).logIndex).toBe(
      log.versions[0]?.index,
    );
    expect(codeOf(() => verifier.verifyFetched({ ...log.input(1), nowSeconds: 2000 }))).toBe('WITNESS_QUORUM');
  });
});
