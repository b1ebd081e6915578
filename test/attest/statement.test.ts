// The statement's hand-written JCS form must be exactly what the generic canonicaliser writes (RFC 8785).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildPublishStatement, serializeStatementJcs, type PublishStatement } from '../../src/attest/index.ts';
import { canonicalizeToText, type JsonValue, type Sha256Digest } from '../../src/pipeline/index.ts';

const generic = (statement: PublishStatement): string => canonicalizeToText(statement as unknown as JsonValue);

// Full UTF-16, lone surrogates and control characters included: JCS escapes them as JSON.stringify does.
const anyText = fc.string({ unit: 'binary', maxLength: 40 });
const digest = fc.stringMatching(/^[0-9a-f]{64}$/).map((hex) => `sha256:${hex}` as Sha256Digest);

const statements = fc
  .record({
    name: anyText,
    version: anyText,
    digest,
    registry: anyText,
    publisher: anyText,
    storedAt: anyText,
    policy: anyText,
    size: fc.maxSafeInteger().filter((n) => n >= 0),
    previousDigest: fc.option(digest, { nil: null }),
  })
  .map(({ name, version, digest: subjectDigest, ...predicate }) =>
    buildPublishStatement({ name, version, digest: subjectDigest, predicate }),
  );

describe('serializeStatementJcs', () => {
  it('equals the generic JCS of the statement, for any strings and sizes', () => {
    fc.assert(
      fc.property(statements, (statement) => {
        expect(serializeStatementJcs(statement)).toBe(generic(statement));
      }),
      { numRuns: 500 },
    );
  });

  it('differs whenever one member differs (it binds every member)', () => {
    fc.assert(
      fc.property(statements, statements, (a, b) => {
        expect(serializeStatementJcs(a) === serializeStatementJcs(b)).toBe(generic(a) === generic(b));
      }),
    );
  });

  it('falls back to the generic form for a statement off the fixed shape (an extra member, a fractional size)', () => {
    const base = buildPublishStatement({
      name: 'io.github.acme/payments',
      version: '1.0.0',
      digest: `sha256:${'ab'.repeat(32)}`,
      predicate: {
        registry: 'http://127.0.0.1:8787',
        publisher: 'io.github.acme',
        storedAt: '2026-11-30T00:00:00.000Z',
        policy: 'v1',
        size: 12,
        previousDigest: null,
      },
    });
    const extra = { ...base, predicate: { ...base.predicate, note: 'x' } } as unknown as PublishStatement;
    expect(serializeStatementJcs(extra)).toBe(generic(extra));
    expect(serializeStatementJcs(extra)).toContain('"note":"x"');
    const fractional = { ...base, predicate: { ...base.predicate, size: 1.5 } };
    expect(serializeStatementJcs(fractional)).toBe(generic(fractional));
    expect(serializeStatementJcs(base)).toBe(generic(base));
  });
});
