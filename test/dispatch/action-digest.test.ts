// The action digest (issue §2): the envelope and its hash exactly as specified, the arguments checked against the
// signed inputSchema (ajv, dialect from $schema, formats, no defaults), the money rules, and reading a tools/call.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bindCheckedAction, checkCallArguments } from '../../src/dispatch/action-digest.ts';
import {
  ACTION_DIGEST_DOMAIN,
  computeAction,
  computeActionForCall,
  fromParsedArguments,
  readCallArguments,
  readToolCall,
  selectSignedTool,
  type SignedTool,
} from '../../src/host/index.ts';
import { canonicalizeToBytes, runPipeline, type JsonObject } from '../../src/pipeline/index.ts';
import { throwsWithCode } from '../verify/helpers.ts';

const utf8 = new TextEncoder();
const REGISTRY = 'https://registry.test';

function signedOf(tool: JsonObject, version = '1.0.0'): { bytes: Uint8Array; signed: SignedTool } {
  const manifest = { name: 'io.example.unit/tools', version, tools: [tool] };
  const bytes = runPipeline(utf8.encode(JSON.stringify(manifest))).canonicalBytes;
  return { bytes, signed: selectSignedTool(bytes, String(tool['name']), REGISTRY) };
}

const refund = signedOf({
  name: 'refund',
  inputSchema: {
    type: 'object',
    properties: { amount: {}, currency: { type: 'string' }, to: { type: 'string' }, note: { type: 'string' } },
    required: ['amount', 'to'],
  },
  capabilities: {
    money: {
      currencies: ['USD'],
      maxAmountMinorPerCall: 5000,
      amountArgument: '/amount',
      currencyArgument: '/currency',
    },
  },
  approval: { informational: ['/note'] },
});

const argsOf = (text: string) => readCallArguments(utf8.encode(text));

describe('computeAction: the envelope and the digest', () => {
  it('hashes "toolseal/v1/action:" || JCS of the closed envelope with the material view', () => {
    const action = computeAction(
      refund.signed,
      argsOf('{"amount":4200,"currency":"USD","to":"A","note":"n"}'),
      'host-a',
    );
    const envelope = {
      type: 'toolseal.action/v1',
      registry: REGISTRY,
      manifest: 'io.example.unit/tools@1.0.0',
      manifestDigest: `sha256:${createHash('sha256').update(refund.bytes).digest('hex')}`,
      tool: 'refund',
      toolDigest: refund.signed.toolDigest,
      arguments: { amount: 4200, currency: 'USD', to: 'A' },
      audience: 'host-a',
    };
    expect(action.envelope).toEqual(envelope);
    const hashed = Buffer.concat([Buffer.from(ACTION_DIGEST_DOMAIN), canonicalizeToBytes(envelope)]);
    expect(action.digest).toBe(`sha256:${createHash('sha256').update(hashed).digest('hex')}`);
    expect(action.request).toEqual({ ...envelope, arguments: { amount: 4200, currency: 'USD', to: 'A', note: 'n' } });
  });

  it('toolDigest is the SHA-256 of the tool object as it stands in the signed bytes', () => {
    const text = Buffer.from(refund.bytes).toString('utf8');
    const start = text.indexOf('{"approval"');
    const toolText = text.slice(start, text.lastIndexOf(']'));
    expect(refund.signed.toolDigest).toBe(`sha256:${createHash('sha256').update(toolText).digest('hex')}`);
  });

  it('never equals the manifest digest of the same bytes (domain prefix)', () => {
    const action = computeAction(refund.signed, argsOf('{"amount":1,"currency":"USD","to":"A"}'), 'host-a');
    expect(action.digest).not.toBe(refund.signed.manifestDigest);
    expect(action.digest).not.toBe(refund.signed.toolDigest);
  });

  it('refuses an unknown tool and a call for another tool', () => {
    throwsWithCode(() => selectSignedTool(refund.bytes, 'nope', REGISTRY), 'NOT_FOUND');
    const call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"other","arguments":{}}}';
    const error = throwsWithCode(() => computeActionForCall(refund.signed, utf8.encode(call), 'h'), 'NOT_FOUND');
    expect(error.pointer).toBe('/params/name');
  });
});

describe('selectSignedTool: parsed once per digest of the bytes', () => {
  it('the same bytes give the same frozen selection; other bytes, even of the same name@version, their own', () => {
    const again = selectSignedTool(new Uint8Array(refund.bytes), 'refund', REGISTRY);
    expect(again).toBe(refund.signed);
    expect(Object.isFrozen(again.tool) && Object.isFrozen(again.tool.inputSchema)).toBe(true);
    expect(() => {
      (again.tool as { description?: string }).description = 'rewritten';
    }).toThrow(TypeError);
    const edited = signedOf({ ...(refund.signed.tool as unknown as JsonObject), description: 'Refund a charge.' });
    expect(edited.signed.manifest).toBe(refund.signed.manifest);
    expect(edited.signed.manifestDigest).not.toBe(refund.signed.manifestDigest);
    expect(edited.signed.toolDigest).not.toBe(refund.signed.toolDigest);
    expect(edited.signed.tool.description).toBe('Refund a charge.');
    expect(selectSignedTool(refund.bytes, 'refund', 'https://other.test').registry).toBe('https://other.test');
  });

  it('the digest is recomputed from the bytes on every call: bytes changed in place are not the cached tool', () => {
    const bytes = new Uint8Array(refund.bytes);
    expect(selectSignedTool(bytes, 'refund', REGISTRY).manifestDigest).toBe(refund.signed.manifestDigest);
    const at = Buffer.from(bytes).indexOf('"refund"');
    bytes.set(utf8.encode('"refunc"'), at); // same length, another tool name
    throwsWithCode(() => selectSignedTool(bytes, 'refund', REGISTRY), 'NOT_FOUND');
    const renamed = selectSignedTool(bytes, 'refunc', REGISTRY);
    expect(renamed.manifestDigest).toBe(`sha256:${createHash('sha256').update(bytes).digest('hex')}`);
  });
});

describe('checkCallArguments and bindCheckedAction: computeAction in two steps', () => {
  it('bind after check is computeAction; check refuses what computeAction refuses', () => {
    const args = argsOf('{"amount":4200,"currency":"USD","to":"A","note":"n"}');
    checkCallArguments(refund.signed, args);
    expect(bindCheckedAction(refund.signed, args, 'host-a')).toEqual(computeAction(refund.signed, args, 'host-a'));
    for (const [text, code] of [
      ['{"amount":4200.0,"currency":"USD","to":"A"}', 'MONEY_INVALID'],
      ['{"amount":5001,"currency":"USD","to":"A"}', 'MONEY_CEILING_EXCEEDED'],
      ['{"amount":1,"currency":"USD"}', 'ARGUMENTS_INVALID'],
    ] as const) {
      throwsWithCode(() => checkCallArguments(refund.signed, argsOf(text)), code);
      throwsWithCode(() => computeAction(refund.signed, argsOf(text), 'host-a'), code);
    }
    throwsWithCode(() => bindCheckedAction(refund.signed, args, ''), 'BAD_REQUEST');
  });
});

describe('money arguments', () => {
  const refusedAt = (text: string, code: 'MONEY_INVALID' | 'MONEY_CEILING_EXCEEDED', pointer: string) =>
    expect(throwsWithCode(() => computeAction(refund.signed, argsOf(text), 'h'), code).pointer).toBe(pointer);

  it.each([['4200.0'], ['42e2'], ['4.2E3'], ['"4200"'], ['-1'], ['-0'], ['null'], ['[4200]']])(
    'refuses the amount %s (an integer literal of minor units ≥ 0 only)',
    (amount) => refusedAt(`{"amount":${amount},"to":"A"}`, 'MONEY_INVALID', '/amount'),
  );

  it('accepts 0 and the ceiling; refuses one more', () => {
    expect(() => computeAction(refund.signed, argsOf('{"amount":0,"currency":"USD","to":"A"}'), 'h')).not.toThrow();
    expect(() => computeAction(refund.signed, argsOf('{"amount":5000,"currency":"USD","to":"A"}'), 'h')).not.toThrow();
    refusedAt('{"amount":5001,"currency":"USD","to":"A"}', 'MONEY_CEILING_EXCEEDED', '/amount');
  });

  it('refuses a currency not declared, and a missing one (a money call names its currency)', () => {
    refusedAt('{"amount":1,"to":"A","currency":"EUR"}', 'MONEY_INVALID', '/currency');
    refusedAt('{"amount":1,"to":"A","currency":"usd"}', 'MONEY_INVALID', '/currency');
    refusedAt('{"amount":1,"to":"A"}', 'MONEY_INVALID', '/currency');
  });

  it('reads the literal inside a tools/call message, whatever its spelling around it', () => {
    const message =
      '{ "params" : { "arguments" : { "to" : "A" , "amount" : 4200.0 } , "name" : "refund" } , "method" : "tools/call" , "id" : 1 }';
    const error = throwsWithCode(() => computeActionForCall(refund.signed, utf8.encode(message), 'h'), 'MONEY_INVALID');
    expect(error.message).toContain('4200.0');
  });

  it('checks already-parsed arguments by value', () => {
    expect(() =>
      computeAction(refund.signed, fromParsedArguments({ amount: 4200, currency: 'USD', to: 'A' }), 'h'),
    ).not.toThrow();
    throwsWithCode(
      () => computeAction(refund.signed, fromParsedArguments({ amount: 42.5, currency: 'USD', to: 'A' }), 'h'),
      'MONEY_INVALID',
    );
  });
});

describe('arguments against the signed inputSchema', () => {
  const strictTool = signedOf({
    name: 'strict',
    inputSchema: {
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email' },
        when: { type: 'string', format: 'date-time' },
        mode: { type: 'string', default: 'fast' },
      },
      additionalProperties: false,
    },
  }).signed;
  const refusal = (signed: SignedTool, text: string) =>
    throwsWithCode(() => computeAction(signed, argsOf(text), 'h'), 'ARGUMENTS_INVALID');

  it('refuses with the pointer of the first error', () => {
    expect(refusal(strictTool, '{"extra":1}').pointer).toBe('/extra');
    expect(refusal(strictTool, '{"email":"not an address"}').pointer).toBe('/email');
    expect(refusal(strictTool, '{"when":"yesterday"}').pointer).toBe('/when');
    expect(refusal(refund.signed, '{"amount":1}').pointer).toBe('/to');
  });

  it('applies no defaults: what is sent is what is approved', () => {
    const args = argsOf('{}');
    const bare = computeAction(strictTool, args, 'h');
    expect(args.value).toEqual({});
    expect(bare.digest).not.toBe(computeAction(strictTool, argsOf('{"mode":"fast"}'), 'h').digest);
  });

  it('takes the dialect from $schema (draft-07 here) and refuses one it cannot check', () => {
    const draft07 = signedOf({
      name: 'd7',
      inputSchema: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        dependencies: { a: ['b'] },
      },
    }).signed;
    expect(refusal(draft07, '{"a":1}').message).toContain('dependencies');
    expect(() => computeAction(draft07, argsOf('{"a":1,"b":2}'), 'h')).not.toThrow();
    const unknown = signedOf({
      name: 'd3',
      inputSchema: { $schema: 'http://json-schema.org/draft-03/schema#', type: 'object' },
    }).signed;
    expect(refusal(unknown, '{}').message).toContain('draft-03');
  });
});

describe('readToolCall', () => {
  const call = (params: string) => utf8.encode(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":${params}}`);

  it('reads the name, the id, the params and the arguments with their text as sent', () => {
    const read = readToolCall(call('{"name":"t","arguments":{"a": 1e2 ,"b":"\\u00e9"},"_meta":{"k":1}}'));
    expect(read).toEqual({
      id: 3,
      name: 't',
      arguments: { value: { a: 100, b: 'é' }, text: '{"a": 1e2 ,"b":"\\u00e9"}' },
      params: { name: 't', arguments: { a: 100, b: 'é' }, _meta: { k: 1 } },
    });
    expect(readToolCall(call('{"name":"t"}')).arguments.value).toEqual({});
    expect(readToolCall(call('{"name":"t"}')).params).toEqual({ name: 't' });
  });

  it('refuses what is not a tools/call with object arguments', () => {
    const other = utf8.encode('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    expect(throwsWithCode(() => readToolCall(other), 'ARGUMENTS_INVALID').pointer).toBe('/method');
    expect(throwsWithCode(() => readToolCall(call('{"name":"t","arguments":[1]}')), 'ARGUMENTS_INVALID').pointer).toBe(
      '/params/arguments',
    );
    expect(throwsWithCode(() => readToolCall(call('{"arguments":{}}')), 'ARGUMENTS_INVALID').pointer).toBe(
      '/params/name',
    );
  });

  it('is as strict as publish (duplicate keys anywhere in the message)', () => {
    const duplicate = utf8.encode('{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"t"}}');
    throwsWithCode(() => readToolCall(duplicate), 'DUPLICATE_KEY');
    throwsWithCode(() => readCallArguments(utf8.encode('[]')), 'ARGUMENTS_INVALID');
  });
});
