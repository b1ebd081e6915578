// Multi-row INSERTs with one parameter per value (issue 24 §2). node-postgres sends a Buffer parameter in binary
// format (PostgreSQL protocol, Bind message: a format code per parameter), so a bytea value travels as its bytes;
// inside an array literal (`unnest($1::bytea[])`) it would travel as hex text, twice its size, encoded here and
// decoded by the server on the same cores. A statement takes at most 65,535 parameters (the Bind message's Int16).

/** The most parameters one statement may carry. */
export const MAX_PARAMETERS = 65_535;

/** `($1, $2), ($3, $4)…`: `rowCount` rows of `columnCount` parameters, numbered from `first`. */
export function formatValuesList(rowCount: number, columnCount: number, first = 1): string {
  const rows: string[] = [];
  for (let row = 0; row < rowCount; row++) {
    const cells: string[] = [];
    for (let column = 0; column < columnCount; column++) cells.push(`$${first + row * columnCount + column}`);
    rows.push(`(${cells.join(', ')})`);
  }
  return rows.join(', ');
}

/** The rows' values in row order, as formatValuesList numbers them. */
export function flattenRows<R>(rows: readonly R[], cellsOf: (row: R) => readonly unknown[]): unknown[] {
  const values: unknown[] = [];
  for (const row of rows) values.push(...cellsOf(row));
  return values;
}

/** `rows` cut into runs that each fit in one statement of `columnCount` parameters a row. */
export function splitRowsForStatements<R>(rows: readonly R[], columnCount: number): R[][] {
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / columnCount));
  const runs: R[][] = [];
  for (let start = 0; start < rows.length; start += perStatement) runs.push(rows.slice(start, start + perStatement));
  return runs;
}
