// C2SP tlog-policy: the spec's example policy, every refusal with its line number, quorum evaluation (fast-check
// against a direct count), and verifyCheckpointWithPolicy (log key, future cosignatures ignored, WITNESS_QUORUM).

import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';
import {
  appendSignatureLines,
  formatCheckpoint,
  formatCosignerVkey,
  formatVerifierString,
  isQuorumMet,
  parseWitnessPolicy,
  signCosignature,
  signNote,
  verifyCheckpointWithPolicy,
} from '../../src/log/index.ts';

const exampleTemplate = readFileSync(new URL('../vectors/witness/policy-example.txt', import.meta.url), 'utf8');

function witnessVkey(name = 'w.example/x'): string {
  return formatCosignerVkey(name, generateEd25519KeyPair().privateKey);
}
function logVkey(name = 'log.example/a'): string {
  return formatVerifierString(name, generateEd25519KeyPair().privateKey);
}

function refusal(text: string): string {
  try {
    parseWitnessPolicy(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolsealError);
    expect((error as ToolsealError).code).toBe('BAD_REQUEST');
    return (error as ToolsealError).message;
  }
  throw new Error('the policy was accepted');
}

describe('the tlog-policy example', () => {
  it('parses, and its quorum needs 2 of X and 1 of Y', () => {
    let first = true;
    const text = exampleTemplate.replace(/<vkey>/g, () => {
      if (first) {
        first = false;
        return logVkey();
      }
      return witnessVkey();
    });
    const policy = parseWitnessPolicy(text);
    expect(policy.logs).toHaveLength(1);
    expect([...policy.witnesses.keys()]).toEqual(['X1', 'X2', 'X3', 'Y1', 'Y2', 'Y3']);
    expect(policy.groups.get('X-witnesses')).toMatchObject({ threshold: 2, members: ['X1', 'X2', 'X3'] });
    expect(policy.groups.get('Y-witnesses')).toMatchObject({ threshold: 1 });
    expect(policy.groups.get('X-and-Y')).toMatchObject({ threshold: 2 });
    expect(policy.quorum).toBe('X-and-Y');
    expect(isQuorumMet(policy, new Set(['X1', 'X3', 'Y2']))).toBe(true);
    expect(isQuorumMet(policy, new Set(['X1', 'Y1', 'Y2', 'Y3']))).toBe(false);
    expect(isQuorumMet(policy, new Set(['X1', 'X2']))).toBe(false);
  });
});

describe('refusals name the line', () => {
  const w1 = witnessVkey('a.example/w1');
  const w2 = witnessVkey('a.example/w2');
  it.each([
    ['an unknown keyword', `witness A ${w1}\nfrobnicate A\nquorum A\n`, 2, /unknown keyword/],
    ['an unknown name', `witness A ${w1}\ngroup G any A B\nquorum G\n`, 2, /"B" is not defined/],
    ['a group used before it is defined', `witness A ${w1}\ngroup H any G\ngroup G any A\nquorum H\n`, 2, /"G"/],
    ['a quorum before its name', `quorum A\nwitness A ${w1}\n`, 1, /"A" is not defined/],
    ['two quorum lines', `witness A ${w1}\nquorum A\nquorum none\n`, 3, /second quorum/],
    ['a duplicate key', `witness A ${w1}\n# c\nwitness B ${w1}\nquorum A\n`, 3, /line 1/],
    ['k > n', `witness A ${w1}\nwitness B ${w2}\ngroup G 3 A B\nquorum G\n`, 3, /threshold 3/],
    ['k = 0', `witness A ${w1}\ngroup G 0 A\nquorum G\n`, 2, /threshold/],
    ['a member twice', `witness A ${w1}\ngroup G any A A\nquorum G\n`, 2, /twice/],
    ['a name defined twice', `witness A ${w1}\nwitness A ${w2}\nquorum A\n`, 2, /already defined/],
    ['none as a member', `witness A ${w1}\ngroup G any none\nquorum G\n`, 2, /none/],
    ['a log key as a witness key', `witness A ${logVkey()}\nquorum A\n`, 1, /0x04/],
    ['a control character', `witness A ${w1}\r\nquorum A\n`, 1, /control/],
    ['no quorum', `witness A ${w1}\n`, 1, /no quorum/],
  ])('%s', (_what, text, line, why) => {
    const message = refusal(text);
    expect(message).toContain(`line ${line}:`);
    expect(message).toMatch(why);
  });

  it('the same key under another name is a duplicate too', () => {
    const { privateKey } = generateEd25519KeyPair();
    const a = formatCosignerVkey('one.example/w', privateKey);
    const b = formatCosignerVkey('two.example/w', privateKey);
    expect(refusal(`witness A ${a}\nwitness B ${b}\nquorum A\n`)).toContain('line 2:');
  });

  it('accepts comments, tabs, URLs and quorum none', () => {
    const policy = parseWitnessPolicy(
      `  # c\n\tlog ${logVkey()} https://log.example/\n\nwitness A\t${w1}  http://127.0.0.1:1\nquorum none\n`,
    );
    expect(policy.witnesses.get('A')?.url).toBe('http://127.0.0.1:1');
    expect(isQuorumMet(policy, new Set())).toBe(true);
  });
});

describe('quorum evaluation', () => {
  it('property: a k-of-n group is met exactly when at least k of its members cosigned', () => {
    const names = ['A', 'B', 'C', 'D', 'E'];
    const lines = names.map((n, i) => `witness ${n} ${witnessVkey(`w.example/${i}`)}`);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.subarray(names), (k, cosigned) => {
        const policy = parseWitnessPolicy(`${lines.join('\n')}\ngroup G ${k} ${names.join(' ')}\nquorum G\n`);
        expect(isQuorumMet(policy, new Set(cosigned))).toBe(cosigned.length >= k);
      }),
      { numRuns: 100 },
    );
  });
});

describe('verifyCheckpointWithPolicy', () => {
  const logKey = generateEd25519KeyPair().privateKey;
  const origin = 'log.example/a';
  const witnesses = ['w1', 'w2', 'w3'].map((n) => ({
    name: `w.example/${n}`,
    privateKey: generateEd25519KeyPair().privateKey,
  }));
  const policyText =
    `log ${formatVerifierString(origin, logKey)}\n` +
    witnesses.map((w, i) => `witness W${i} ${formatCosignerVkey(w.name, w.privateKey)}`).join('\n') +
    '\ngroup Q 2 W0 W1 W2\nquorum Q\n';
  const policy = parseWitnessPolicy(policyText);
  const body = formatCheckpoint({ origin, size: 3, rootHash: new Uint8Array(32).fill(1) });
  const signed = signNote(body, { name: origin, privateKey: logKey });

  it('accepts 2 of 3, refuses 1 of 3 with WITNESS_QUORUM, ignores a future cosignature', () => {
    const two = appendSignatureLines(signed, [
      signCosignature(body, witnesses[0]!, 100),
      signCosignature(body, witnesses[2]!, 100),
    ]);
    expect(verifyCheckpointWithPolicy(two, policy, { nowSeconds: 100 }).cosignedBy).toEqual(['W0', 'W2']);
    const one = appendSignatureLines(signed, [signCosignature(body, witnesses[0]!, 100)]);
    expect(() => verifyCheckpointWithPolicy(one, policy, { nowSeconds: 100 })).toThrow(
      expect.objectContaining({ code: 'WITNESS_QUORUM' }),
    );
    const future = appendSignatureLines(signed, [
      signCosignature(body, witnesses[0]!, 100),
      signCosignature(body, witnesses[1]!, 101),
    ]);
    expect(() => verifyCheckpointWithPolicy(future, policy, { nowSeconds: 100 })).toThrow(
      expect.objectContaining({ code: 'WITNESS_QUORUM' }),
    );
  });

  it('refuses a bad cosignature by a policy witness and a checkpoint signed by another log key', () => {
    const otherBody = formatCheckpoint({ origin, size: 4, rootHash: new Uint8Array(32).fill(1) });
    const forged = appendSignatureLines(signed, [
      signCosignature(otherBody, witnesses[0]!, 100),
      signCosignature(body, witnesses[1]!, 100),
    ]);
    expect(() => verifyCheckpointWithPolicy(forged, policy, { nowSeconds: 100 })).toThrow(
      expect.objectContaining({ code: 'SIGNATURE_INVALID' }),
    );
    const byOther = signNote(body, { name: origin, privateKey: generateEd25519KeyPair().privateKey });
    expect(() => verifyCheckpointWithPolicy(byOther, policy, { nowSeconds: 100 })).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_KEY' }),
    );
  });
});
