// The guard policy file (issue 13 §4): read strictly as a closed type with stable codes and pointers, the same verdict
// as schema/guard-policy-v1.schema.json, and matched against the signed tool and the checked arguments.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { ToolsealError } from '../../../src/core/errors.ts';
import {
  findUnmeasuredMoneyTools,
  matchPolicy,
  readGuardPolicy,
  type GuardPolicy,
  type PolicyRule,
} from '../../../src/guard/core/policy.ts';
import type { ManifestTool } from '../../../src/pipeline/envelope.ts';
import { repoRoot } from '../../fixtures/guard-env.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function refusal(text: string): { code: string; pointer: string | undefined } {
  try {
    readGuardPolicy(bytes(text));
  } catch (error) {
    if (!(error instanceof ToolsealError)) throw error;
    return { code: error.code, pointer: error.pointer };
  }
  throw new Error(`accepted ${text}`);
}

const ISSUE_EXAMPLE = `{"version": 1, "requireApproval": [{"tool": "refund"}, {"annotation": "destructiveHint"},
  {"money": {"atLeastMinor": 10000}}, {"capability": "network"}, {"capability": "filesystem.write"},
  {"capability": "secrets"}, {"all": true}]}`;

const REFUSED: [string, string, string | undefined][] = [
  ['{"version":1,"requireApproval":[],"version":1}', 'DUPLICATE_KEY', '/version'],
  ['{"version":1,"requireApproval":[{"tool":"a","tool":"a"}]}', 'DUPLICATE_KEY', '/requireApproval/0/tool'],
  ['[]', 'BAD_REQUEST', ''],
  ['{"version":1}', 'BAD_REQUEST', '/requireApproval'],
  ['{"requireApproval":[]}', 'BAD_REQUEST', '/version'],
  ['{"version":2,"requireApproval":[]}', 'BAD_REQUEST', '/version'],
  ['{"version":1.0e0,"requireApproval":{}}', 'BAD_REQUEST', '/requireApproval'],
  ['{"version":1,"requireApproval":[],"extra":true}', 'UNKNOWN_FIELD', '/extra'],
  ['{"version":1,"requireApproval":[{"tool":"a","all":true}]}', 'BAD_REQUEST', '/requireApproval/0'],
  ['{"version":1,"requireApproval":[{}]}', 'BAD_REQUEST', '/requireApproval/0'],
  ['{"version":1,"requireApproval":["refund"]}', 'BAD_REQUEST', '/requireApproval/0'],
  ['{"version":1,"requireApproval":[{"tool":"a"},{"tools":"a"}]}', 'UNKNOWN_FIELD', '/requireApproval/1/tools'],
  ['{"version":1,"requireApproval":[{"tool":""}]}', 'BAD_REQUEST', '/requireApproval/0/tool'],
  ['{"version":1,"requireApproval":[{"tool":7}]}', 'BAD_REQUEST', '/requireApproval/0/tool'],
  ['{"version":1,"requireApproval":[{"annotation":"destructive"}]}', 'BAD_REQUEST', '/requireApproval/0/annotation'],
  ['{"version":1,"requireApproval":[{"annotation":"title"}]}', 'BAD_REQUEST', '/requireApproval/0/annotation'],
  ['{"version":1,"requireApproval":[{"capability":"filesystem"}]}', 'BAD_REQUEST', '/requireApproval/0/capability'],
  ['{"version":1,"requireApproval":[{"capability":"money"}]}', 'BAD_REQUEST', '/requireApproval/0/capability'],
  ['{"version":1,"requireApproval":[{"all":false}]}', 'BAD_REQUEST', '/requireApproval/0/all'],
  ['{"version":1,"requireApproval":[{"all":"true"}]}', 'BAD_REQUEST', '/requireApproval/0/all'],
  ['{"version":1,"requireApproval":[{"money":{}}]}', 'BAD_REQUEST', '/requireApproval/0/money/atLeastMinor'],
  ['{"version":1,"requireApproval":[{"money":10000}]}', 'BAD_REQUEST', '/requireApproval/0/money'],
  [
    '{"version":1,"requireApproval":[{"money":{"atLeastMinor":1,"currency":"USD"}}]}',
    'UNKNOWN_FIELD',
    '/requireApproval/0/money/currency',
  ],
  [
    '{"version":1,"requireApproval":[{"money":{"atLeastMinor":-1}}]}',
    'BAD_REQUEST',
    '/requireApproval/0/money/atLeastMinor',
  ],
  [
    '{"version":1,"requireApproval":[{"money":{"atLeastMinor":1.5}}]}',
    'BAD_REQUEST',
    '/requireApproval/0/money/atLeastMinor',
  ],
  [
    '{"version":1,"requireApproval":[{"money":{"atLeastMinor":"1"}}]}',
    'BAD_REQUEST',
    '/requireApproval/0/money/atLeastMinor',
  ],
  ['{"version":1,"requireApproval":[{"money":{"atLeastMinor":9007199254740992}}]}', 'UNSAFE_NUMBER', undefined],
  ['{"version":1,"requireApproval":[]', 'INVALID_JSON', undefined],
];

describe('readGuardPolicy', () => {
  it("reads the issue's example, every rule shape", () => {
    expect(readGuardPolicy(bytes(ISSUE_EXAMPLE))).toEqual({
      version: 1,
      requireApproval: [
        { tool: 'refund' },
        { annotation: 'destructiveHint' },
        { money: { atLeastMinor: 10000 } },
        { capability: 'network' },
        { capability: 'filesystem.write' },
        { capability: 'secrets' },
        { all: true },
      ],
    });
    expect(readGuardPolicy(bytes('{"requireApproval":[],"version":1}')).requireApproval).toEqual([]);
  });

  it.each(REFUSED)('refuses %s with %s at %s', (text, code, pointer) => {
    const got = refusal(text);
    expect(got.code).toBe(code);
    if (pointer !== undefined) expect(got.pointer).toBe(pointer);
  });

  it('refuses more than 256 rules', () => {
    const rules = Array.from({ length: 257 }, () => '{"all":true}').join(',');
    expect(refusal(`{"version":1,"requireApproval":[${rules}]}`)).toEqual({
      code: 'BAD_REQUEST',
      pointer: '/requireApproval',
    });
  });

  it('says what schema/guard-policy-v1.schema.json says, for every example', () => {
    const schema = JSON.parse(readFileSync(join(repoRoot, 'schema', 'guard-policy-v1.schema.json'), 'utf8'));
    const validate = new Ajv2020({ strict: true, allErrors: false }).compile(schema);
    const parseCodes = new Set(['DUPLICATE_KEY', 'UNSAFE_NUMBER', 'INVALID_JSON']);
    const texts = [ISSUE_EXAMPLE, ...REFUSED.filter(([, code]) => !parseCodes.has(code)).map(([text]) => text)];
    expect(texts.length).toBeGreaterThan(20);
    for (const text of texts) {
      let accepted = true;
      try {
        readGuardPolicy(bytes(text));
      } catch {
        accepted = false;
      }
      expect(validate(JSON.parse(text)), text).toBe(accepted);
    }
  });
});

const refund: ManifestTool = {
  name: 'refund',
  description: 'Refund a charge.',
  inputSchema: { type: 'object' },
  annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  capabilities: {
    network: { hosts: ['api.stripe.com'] },
    filesystem: { read: [], write: [] },
    secrets: { env: [] },
    money: {
      currencies: ['USD'],
      maxAmountMinorPerCall: 50000,
      amountArgument: '/amount',
      currencyArgument: '/currency',
    },
  },
};
const lookup: ManifestTool = {
  name: 'lookup',
  inputSchema: { type: 'object' },
  annotations: { readOnlyHint: true },
  capabilities: { network: { hosts: [] }, filesystem: { write: [] }, secrets: { env: [] } },
};
const bare: ManifestTool = { name: 'bare', inputSchema: { type: 'object' } };

const policyOf = (...rules: PolicyRule[]): GuardPolicy => ({ version: 1, requireApproval: rules });
const matches = (rule: PolicyRule, tool: ManifestTool, args: Record<string, unknown> = {}): boolean =>
  matchPolicy(policyOf(rule), tool, args as never).length === 1;

describe('matchPolicy', () => {
  it('no rules: nothing needs approval; the matched rules come back in policy order', () => {
    expect(matchPolicy(policyOf(), refund, { amount: 1 })).toEqual([]);
    const rules: PolicyRule[] = [{ all: true }, { tool: 'lookup' }, { tool: 'refund' }];
    expect(matchPolicy(policyOf(...rules), refund, {})).toEqual([{ all: true }, { tool: 'refund' }]);
  });

  it('tool: the exact signed name', () => {
    expect(matches({ tool: 'refund' }, refund)).toBe(true);
    expect(matches({ tool: 'Refund' }, refund)).toBe(false);
    expect(matches({ tool: 'refund' }, lookup)).toBe(false);
  });

  it("annotation: the hint, or MCP's default when the tool does not say", () => {
    expect(matches({ annotation: 'destructiveHint' }, refund)).toBe(true);
    expect(matches({ annotation: 'destructiveHint' }, lookup)).toBe(false); // read-only
    expect(matches({ annotation: 'destructiveHint' }, bare)).toBe(true); // MCP default true
    expect(matches({ annotation: 'openWorldHint' }, bare)).toBe(true);
    expect(matches({ annotation: 'openWorldHint' }, { ...bare, annotations: { openWorldHint: false } })).toBe(false);
    expect(matches({ annotation: 'readOnlyHint' }, lookup)).toBe(true);
    expect(matches({ annotation: 'readOnlyHint' }, bare)).toBe(false);
    expect(matches({ annotation: 'idempotentHint' }, bare)).toBe(false);
  });

  it('money: calls of a tool with an amount argument, from the threshold up; 0 is every money call', () => {
    expect(matches({ money: { atLeastMinor: 10000 } }, refund, { amount: 9999 })).toBe(false);
    expect(matches({ money: { atLeastMinor: 10000 } }, refund, { amount: 10000 })).toBe(true);
    expect(matches({ money: { atLeastMinor: 0 } }, refund, { amount: 0 })).toBe(true);
    expect(matches({ money: { atLeastMinor: 0 } }, lookup, { amount: 5 })).toBe(false);
    const noArgument = { ...refund, capabilities: { money: { currencies: ['USD'], maxAmountMinorPerCall: 1 } } };
    // A money tool that names no amount argument cannot be measured: every call matches (fail closed).
    expect(matches({ money: { atLeastMinor: 10000 } }, noArgument, { amount: 5 })).toBe(true);
    expect(
      findUnmeasuredMoneyTools({ version: 1, requireApproval: [{ money: { atLeastMinor: 1 } }] }, [
        refund,
        lookup,
        noArgument,
      ] as never),
    ).toEqual([noArgument.name]);
    expect(findUnmeasuredMoneyTools({ version: 1, requireApproval: [{ all: true }] }, [noArgument] as never)).toEqual(
      [],
    );
  });

  it('capability: declared non-empty or no claim matches; only an explicit empty list does not', () => {
    expect(matches({ capability: 'network' }, refund)).toBe(true);
    expect(matches({ capability: 'network' }, lookup)).toBe(false);
    expect(matches({ capability: 'network' }, bare)).toBe(true);
    expect(matches({ capability: 'network' }, { ...bare, capabilities: { network: {} } })).toBe(true);
    expect(matches({ capability: 'filesystem.write' }, refund)).toBe(false);
    expect(matches({ capability: 'filesystem.write' }, { ...bare, capabilities: { filesystem: { read: [] } } })).toBe(
      true,
    );
    expect(
      matches({ capability: 'filesystem.write' }, { ...bare, capabilities: { filesystem: { write: ['/x'] } } }),
    ).toBe(true);
    expect(matches({ capability: 'secrets' }, refund)).toBe(false);
    expect(matches({ capability: 'secrets' }, bare)).toBe(true);
    expect(matches({ capability: 'secrets' }, { ...bare, capabilities: { secrets: { env: ['K'] } } })).toBe(true);
  });

  it('all: every call', () => {
    for (const tool of [refund, lookup, bare]) expect(matches({ all: true }, tool)).toBe(true);
  });
});
