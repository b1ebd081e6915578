// The action-digest equivalence corpus (test/vectors/actions/, issue §2): pairs of calls whose digests must match or
// differ, and calls refused before any digest is computed.

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { computeActionForCall, selectSignedTool, type SignedTool } from '../../src/host/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import { throwsWithCode } from '../verify/helpers.ts';
import type { ErrorCode } from '../../src/core/errors.ts';

const folder = new URL('../vectors/actions/', import.meta.url);
const utf8 = new TextEncoder();
const manifestSource = JSON.parse(readFileSync(new URL('refunds-manifest.json', folder), 'utf8')) as {
  version: string;
};

interface Side {
  message: string;
  tool?: string;
  version?: string;
  audience?: string;
}
interface Pair {
  why: string;
  relation: 'same' | 'different';
  a: Side;
  b: Side;
}
interface Refused {
  why: string;
  message: string;
  code: ErrorCode;
  pointer: string;
}

const signedByVersion = new Map<string, Uint8Array>();
function signedManifest(version: string): Uint8Array {
  let bytes = signedByVersion.get(version);
  if (bytes === undefined) {
    bytes = runPipeline(utf8.encode(JSON.stringify({ ...manifestSource, version }))).canonicalBytes;
    signedByVersion.set(version, bytes);
  }
  return bytes;
}

function signedTool(side: Side): SignedTool {
  return selectSignedTool(signedManifest(side.version ?? '1.0.0'), side.tool ?? 'refund', 'https://registry.test');
}

function digestOf(side: Side): string {
  return computeActionForCall(signedTool(side), utf8.encode(side.message), side.audience ?? 'host-a').digest;
}

const pairFiles = readdirSync(folder).filter((file) => /^(same|different)-.*\.json$/.test(file));

describe('action digest equivalence corpus', () => {
  it('has both kinds of pairs', () => {
    expect(pairFiles.filter((file) => file.startsWith('same-')).length).toBeGreaterThanOrEqual(5);
    expect(pairFiles.filter((file) => file.startsWith('different-')).length).toBeGreaterThanOrEqual(8);
  });

  for (const file of pairFiles) {
    const pair = JSON.parse(readFileSync(new URL(file, folder), 'utf8')) as Pair;
    it(`${file}: ${pair.why}`, () => {
      expect(file.startsWith(`${pair.relation}-`)).toBe(true);
      const [a, b] = [digestOf(pair.a), digestOf(pair.b)];
      expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
      if (pair.relation === 'same') expect(b).toBe(a);
      else expect(b).not.toBe(a);
    });
  }
});

describe('calls refused before any digest', () => {
  const refused = JSON.parse(readFileSync(new URL('refused.json', folder), 'utf8')) as Refused[];
  for (const entry of refused) {
    it(`${entry.why}: ${entry.code} at ${entry.pointer}`, () => {
      const tool = signedTool({ message: entry.message });
      const error = throwsWithCode(() => computeActionForCall(tool, utf8.encode(entry.message), 'host-a'), entry.code);
      expect(error.pointer).toBe(entry.pointer);
    });
  }
});
