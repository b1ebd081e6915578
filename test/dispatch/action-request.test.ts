// The travelling action envelope (issue §2): read strictly and closed, and its digest recomputed by the receiver
// from the arguments as sent; it never carries a digest or a material view to trust.

import { describe, expect, it } from 'vitest';
import {
  computeAction,
  computeActionFromRequest,
  readActionRequest,
  readCallArguments,
  selectSignedTool,
} from '../../src/host/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import { throwsWithCode } from '../verify/helpers.ts';

const utf8 = new TextEncoder();
const bytes = runPipeline(
  utf8.encode(
    JSON.stringify({
      name: 'io.example.unit/pay',
      version: '2.0.0',
      tools: [
        {
          name: 'pay',
          inputSchema: { type: 'object', properties: { amount: { type: 'number' } } },
          capabilities: { money: { currencies: ['EUR'], maxAmountMinorPerCall: 900, amountArgument: '/amount' } },
          approval: { informational: ['/note'], unordered: ['/tags'] },
        },
      ],
    }),
  ),
).canonicalBytes;
const signed = selectSignedTool(bytes, 'pay', 'https://registry.test');
const sent = '{"amount":400,"tags":["b","a"],"note":"n"}';
const action = computeAction(signed, readCallArguments(utf8.encode(sent)), 'host-a');
const travelling = (change: Record<string, unknown> = {}) =>
  utf8.encode(JSON.stringify({ ...action.request, ...change }));

describe('readActionRequest and computeActionFromRequest', () => {
  it('recompute the same digest from the arguments as sent', () => {
    const request = readActionRequest(travelling());
    expect(request.arguments.value).toEqual(JSON.parse(sent));
    expect(computeActionFromRequest(signed, request).digest).toBe(action.digest);
  });

  it('read the amount literal from the envelope bytes', () => {
    const text = new TextDecoder().decode(travelling()).replace('"amount":400', '"amount":400.0');
    throwsWithCode(() => computeActionFromRequest(signed, readActionRequest(utf8.encode(text))), 'MONEY_INVALID');
  });

  it('refuse a digest or any other member outside the closed type', () => {
    const error = throwsWithCode(() => readActionRequest(travelling({ digest: action.digest })), 'UNKNOWN_FIELD');
    expect(error.pointer).toBe('/digest');
    expect(throwsWithCode(() => readActionRequest(travelling({ type: 'x' })), 'BAD_REQUEST').pointer).toBe('/type');
    expect(throwsWithCode(() => readActionRequest(travelling({ audience: 7 })), 'BAD_REQUEST').pointer).toBe(
      '/audience',
    );
    throwsWithCode(() => readActionRequest(utf8.encode('{"type":1,"type":2}')), 'DUPLICATE_KEY');
  });

  it('refuse an envelope that names another tool or other digests than the signed ones', () => {
    const other = (change: Record<string, unknown>) =>
      computeActionFromRequest(signed, readActionRequest(travelling(change)));
    expect(throwsWithCode(() => other({ toolDigest: `sha256:${'0'.repeat(64)}` }), 'DIGEST_MISMATCH').pointer).toBe(
      '/toolDigest',
    );
    expect(throwsWithCode(() => other({ manifestDigest: `sha256:${'1'.repeat(64)}` }), 'DIGEST_MISMATCH').pointer).toBe(
      '/manifestDigest',
    );
    expect(throwsWithCode(() => other({ manifest: 'io.example.unit/pay@1.0.0' }), 'BAD_REQUEST').pointer).toBe(
      '/manifest',
    );
    expect(throwsWithCode(() => other({ registry: 'https://elsewhere.test' }), 'BAD_REQUEST').pointer).toBe(
      '/registry',
    );
  });

  it('bind the audience the envelope names', () => {
    expect(computeActionFromRequest(signed, readActionRequest(travelling({ audience: 'host-b' }))).digest).not.toBe(
      action.digest,
    );
  });
});
