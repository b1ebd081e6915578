// Multi-row INSERT text (src/store/postgres/multi-row.ts): parameters numbered row by row, and runs that fit the
// protocol's 65,535 parameters a statement.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  flattenRows,
  formatValuesList,
  MAX_PARAMETERS,
  splitRowsForStatements,
} from '../../../src/store/postgres/multi-row.ts';

describe('multi-row INSERTs', () => {
  it('numbers the parameters row by row, from the first one given', () => {
    expect(formatValuesList(2, 3)).toBe('($1, $2, $3), ($4, $5, $6)');
    expect(formatValuesList(1, 2, 9)).toBe('($9, $10)');
    expect(formatValuesList(0, 4)).toBe('');
  });

  it('flattens the rows in the order the list numbers them', () => {
    const bytes = Buffer.from([0, 255]);
    expect(
      flattenRows(
        [
          { a: 'x', b: bytes },
          { a: 'y', b: bytes },
        ],
        (row) => [row.a, row.b],
      ),
    ).toEqual(['x', bytes, 'y', bytes]);
  });

  it('cuts rows into runs that fit one statement, keeping every row once and in order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 70_000 }), fc.integer({ min: 1, max: 9 }), (count, columns) => {
        const rows = Array.from({ length: count }, (_, i) => i);
        const runs = splitRowsForStatements(rows, columns);
        expect(runs.flat()).toEqual(rows);
        for (const run of runs) {
          expect(run.length).toBeGreaterThan(0);
          expect(run.length * columns).toBeLessThanOrEqual(MAX_PARAMETERS);
        }
        // As few statements as the limit allows.
        expect(runs.length).toBe(Math.ceil((count * columns) / (Math.floor(MAX_PARAMETERS / columns) * columns)));
      }),
      { numRuns: 50 },
    );
  });
});
