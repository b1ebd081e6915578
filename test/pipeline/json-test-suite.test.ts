// nst/JSONTestSuite through the strict parser: every n_ refused, every y_ accepted (bar our stated policy
// exceptions), and every i_ decided in test/vectors/json-test-suite-decisions.json.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ToolsealError, type ErrorCode } from '../../src/core/errors.ts';
import { parseStrict } from '../../src/pipeline/index.ts';
import { listFiles, readJsonFile, refusalOf, vectorPath } from '../helpers/pipeline-helpers.ts';

const dir = vectorPath('json-test-suite');
const all = listFiles(dir, '.json');
const read = (file: string): Uint8Array => readFileSync(`${dir}/${file}`);

/**
 * y_ files we refuse on purpose. JSON (RFC 8259) allows duplicate member names; I-JSON (RFC 7493 §2.3) and
 * docs/design.md stage 1 do not — identical duplicates included — because two parsers can disagree on which one wins.
 */
const yPolicyExceptions: Record<string, ErrorCode> = {
  'y_object_duplicated_key.json': 'DUPLICATE_KEY',
  'y_object_duplicated_key_and_value.json': 'DUPLICATE_KEY',
};

interface Decisions {
  groups: { why: string; outcome: 'accept' | ErrorCode; files: string[] }[];
}

const decisionGroups = readJsonFile<Decisions>(vectorPath('json-test-suite-decisions.json')).groups;
const decisions = new Map<string, 'accept' | ErrorCode>();
for (const group of decisionGroups) for (const file of group.files) decisions.set(file, group.outcome);

function outcomeOf(file: string): 'accept' | ErrorCode {
  try {
    parseStrict(read(file));
    return 'accept';
  } catch (error) {
    if (error instanceof ToolsealError) return error.code;
    throw error;
  }
}

describe('JSONTestSuite', () => {
  it('has the expected number of files of each kind', () => {
    expect(all.filter((f) => f.startsWith('y_'))).toHaveLength(95);
    expect(all.filter((f) => f.startsWith('n_'))).toHaveLength(188);
    expect(all.filter((f) => f.startsWith('i_'))).toHaveLength(35);
  });

  it('every i_ file has a decision and every decision names an existing i_ file', () => {
    const iFiles = all.filter((f) => f.startsWith('i_'));
    expect([...decisions.keys()].sort()).toEqual(iFiles);
  });

  it('every decision group says why, and no file is decided twice', () => {
    for (const group of decisionGroups) expect(group.why.length, group.outcome).toBeGreaterThan(20);
    expect(decisionGroups.reduce((n, group) => n + group.files.length, 0)).toBe(decisions.size);
  });

  it('every policy exception is an existing y_ file', () => {
    for (const file of Object.keys(yPolicyExceptions)) expect(all).toContain(file);
  });

  describe('n_ files are refused', () => {
    for (const file of all.filter((f) => f.startsWith('n_'))) {
      it(file, () => {
        // refusalOf fails the test if parseStrict returns, and rethrows anything that is not a ToolsealError.
        const refusal = refusalOf(() => parseStrict(read(file)));
        expect(refusal.code).toMatch(
          /^(INVALID_JSON|INVALID_UTF8|DUPLICATE_KEY|LONE_SURROGATE|UNSAFE_NUMBER|DEPTH_LIMIT)$/,
        );
      });
    }
  });

  describe('y_ files are accepted (except the stated policy exceptions)', () => {
    for (const file of all.filter((f) => f.startsWith('y_'))) {
      const exception = yPolicyExceptions[file];
      it(exception === undefined ? file : `${file} → ${exception} (policy)`, () => {
        expect(outcomeOf(file)).toBe(exception ?? 'accept');
      });
    }
  });

  describe('i_ files get the decision recorded in json-test-suite-decisions.json', () => {
    for (const file of all.filter((f) => f.startsWith('i_'))) {
      it(`${file} → ${decisions.get(file) ?? 'NO DECISION'}`, () => {
        const decision = decisions.get(file);
        expect(decision, `no decision recorded for ${file}`).toBeDefined();
        expect(outcomeOf(file)).toBe(decision);
      });
    }
  });

  it('accepted y_ values are the values JSON.parse reads (where JSON.parse is exact)', () => {
    // A cross-check of values, not only of acceptance: for files without duplicates, our value equals JSON.parse's,
    // except that our parser reads -0 as 0 (JCS writes both as "0", RFC 8785 §3.2.2.3).
    for (const file of all.filter((f) => f.startsWith('y_') && yPolicyExceptions[f] === undefined)) {
      const text = new TextDecoder().decode(read(file));
      expect(parseStrict(read(file)).value, file).toEqual(
        JSON.parse(text, (_key, value: unknown) => (Object.is(value, -0) ? 0 : value)),
      );
    }
  });
});
