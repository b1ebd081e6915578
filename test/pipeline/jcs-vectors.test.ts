// RFC 8785 (JCS) test vectors: strict parse of input/X.json, then canonicalisation, gives output/X.json byte for byte.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalizeToBytes, computeSha256Hex, parseStrict } from '../../src/pipeline/index.ts';
import { listFiles, referenceJcs, vectorPath } from '../helpers/pipeline-helpers.ts';

const inputDir = vectorPath('jcs', 'input');
const files = listFiles(inputDir, '.json');

describe('RFC 8785 vectors (cyberphone/json-canonicalization testdata)', () => {
  it('finds the six upstream vectors', () => {
    expect(files).toEqual([
      'arrays.json',
      'french.json',
      'structures.json',
      'unicode.json',
      'values.json',
      'weird.json',
    ]);
  });

  for (const file of files) {
    it(`${file} canonicalises to exactly output/${file}`, () => {
      const input = readFileSync(vectorPath('jcs', 'input', file));
      const expected = readFileSync(vectorPath('jcs', 'output', file));
      const actual = Buffer.from(canonicalizeToBytes(parseStrict(input).value));
      expect(actual.toString('hex')).toBe(expected.toString('hex'));
      expect(actual.equals(expected)).toBe(true);
      // And the independent reference serialiser in our test helpers agrees (it is what other suites cross-check with).
      expect(referenceJcs(parseStrict(input).value)).toBe(expected.toString('utf8'));
    });

    it(`${file}: outhex/${file.replace(/\.json$/, '.txt')} agrees with output/${file}`, () => {
      // Guards the vector files themselves: the hex form and the raw form must be the same bytes.
      const hex = readFileSync(vectorPath('jcs', 'outhex', file.replace(/\.json$/, '.txt')), 'utf8').replace(
        /\s+/g,
        '',
      );
      const expected = readFileSync(vectorPath('jcs', 'output', file));
      expect(hex.toLowerCase()).toBe(expected.toString('hex'));
    });
  }

  it('canonicalisation is a fixed point on every output file', () => {
    for (const file of files) {
      const output = readFileSync(vectorPath('jcs', 'output', file));
      const again = canonicalizeToBytes(parseStrict(output).value);
      expect(computeSha256Hex(again)).toBe(computeSha256Hex(output));
    }
  });
});
