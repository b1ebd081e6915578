// The equivalence corpus (test/vectors/equivalence/*.json): pairs of manifests, kept as raw text, that must give
// the same canonical bytes ("same") or different digests ("different").

import { describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline/index.ts';
import { fromUtf8, listFiles, readJsonFile, utf8, vectorPath } from '../helpers/pipeline-helpers.ts';

interface Pair {
  why: string;
  relation: 'same' | 'different';
  /** Raw JSON text of manifest A (a string, so whitespace, escapes and number forms survive). */
  a: string;
  b: string;
}

const dir = vectorPath('equivalence');
const files = listFiles(dir, '.json');
const pairs = files.map((file) => ({ file, pair: readJsonFile<Pair>(`${dir}/${file}`) }));

describe('equivalence corpus', () => {
  it('every file is a well-formed pair, and the corpus holds both relations', () => {
    for (const { file, pair } of pairs) {
      expect(Object.keys(pair).sort(), file).toEqual(['a', 'b', 'relation', 'why']);
      expect(['same', 'different'], file).toContain(pair.relation);
      expect(pair.why.length, file).toBeGreaterThan(20);
      // A pair of identical texts would prove nothing.
      expect(pair.a, file).not.toBe(pair.b);
    }
    expect(pairs.filter(({ pair }) => pair.relation === 'same').length).toBeGreaterThanOrEqual(6);
    expect(pairs.filter(({ pair }) => pair.relation === 'different').length).toBeGreaterThanOrEqual(6);
  });

  for (const { file, pair } of pairs) {
    it(`${file}: ${pair.relation} — ${pair.why.slice(0, 90)}`, () => {
      const a = runPipeline(utf8(pair.a));
      const b = runPipeline(utf8(pair.b));
      if (pair.relation === 'same') {
        expect(fromUtf8(b.canonicalBytes)).toBe(fromUtf8(a.canonicalBytes));
        expect(Buffer.from(b.canonicalBytes).equals(Buffer.from(a.canonicalBytes))).toBe(true);
        expect(b.digest).toBe(a.digest);
      } else {
        expect(b.digest).not.toBe(a.digest);
        expect(fromUtf8(b.canonicalBytes)).not.toBe(fromUtf8(a.canonicalBytes));
      }
    });
  }
});
