// The call gate (issue 13 §4): arguments checked from the exact request bytes before anything is forwarded; under a
// policy, approvals requested, remembered, consumed and refused. The gate's own branching runs against a scripted
// port; every approval code the registry answers with is then checked against the real registry.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../../src/core/errors.ts';
import { computeActionForCall, selectSignedTool } from '../../../src/dispatch/action-digest.ts';
import { readActionRequest } from '../../../src/dispatch/action-request.ts';
import { type ApprovalsPort, CallGate, type GateOutcome } from '../../../src/guard/core/call-gate.ts';
import { REFUSAL_META_KEY } from '../../../src/guard/core/guard-types.ts';
import type { GuardPolicy } from '../../../src/guard/core/policy.ts';
import { parseStrictText, runPipeline } from '../../../src/pipeline/index.ts';
import { APPROVAL_META_KEY, type ApprovalCreatedResponse } from '../../../src/protocol/wire.ts';
import { REFUND_CEILING, REFUND_REF, refundManifestBytes } from '../../fixtures/refund-tools.ts';
import {
  type ApprovalRegistry,
  HOST_NAME,
  MONEY_POLICY,
  openGate,
  refundArguments,
  startApprovalRegistry,
  toolsCallText,
} from '../approval-helpers.ts';

const ORIGIN = 'https://registry.test';
const signedBytes = runPipeline(refundManifestBytes()).canonicalBytes;
const encoder = new TextEncoder();
const ID_A = `apr_${'A'.repeat(22)}`;
const ID_B = `apr_${'B'.repeat(22)}`;

type Step = { kind: 'request' | 'consume'; id?: string; envelope: string };

/** A scripted registry: each call takes the next answer (a value, or an error to throw) of its method. */
function scriptedPort(script: { request?: unknown[]; consume?: unknown[] }): ApprovalsPort & { steps: Step[] } {
  const steps: Step[] = [];
  const next = (list: unknown[] | undefined, what: string): unknown => {
    if (list === undefined || list.length === 0) throw new Error(`unexpected ${what}`);
    const answer = list.shift();
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return {
    steps,
    whoami: async () => ({ kind: 'host', name: HOST_NAME }),
    get: async () => {
      throw new Error('unexpected get');
    },
    request: async (bytes) => {
      steps.push({ kind: 'request', envelope: Buffer.from(bytes).toString('utf8') });
      return next(script.request, 'request') as ApprovalCreatedResponse & { created: boolean };
    },
    consume: async (id, bytes) => {
      steps.push({ kind: 'consume', id, envelope: Buffer.from(bytes).toString('utf8') });
      return next(script.consume, 'consume') as never;
    },
  };
}

function digestOf(text: string, origin = ORIGIN, bytes = signedBytes): string {
  const signed = selectSignedTool(bytes, 'refund', origin);
  return computeActionForCall(signed, encoder.encode(text), HOST_NAME).digest;
}

function created(id: string, digest: string, status: 'pending' | 'approved' = 'pending', isNew = true) {
  return {
    id,
    digest,
    status,
    expiresAt: '2030-01-01T00:00:00.000Z',
    url: `${ORIGIN}/v1/approvals/${id}`,
    created: isNew,
  };
}
const consumed = (id: string, digest: string) => ({ id, digest, status: 'consumed', logIndex: 7 });

async function gateWith(port: ApprovalsPort, policy: GuardPolicy | null = MONEY_POLICY): Promise<CallGate> {
  return CallGate.open({ signedBytes, registry: ORIGIN, ...(policy === null ? {} : { policy, approvals: port }) });
}

const decide = (gate: CallGate, text: string, name = 'refund'): Promise<GateOutcome> => {
  const id = (JSON.parse(text) as { id?: string | number }).id ?? null;
  return gate.decideCall(name, id, encoder.encode(text));
};

interface Refusal {
  /** The text the model reads. */
  message: string;
  /** `_meta["io.toolseal/refusal"]`: code, pointer, tool, manifest (id, digest). */
  data: Record<string, unknown>;
}
/** A refused call is a tool result with isError (MCP 2025-11-25 "Tools" §Error Handling), not a JSON-RPC error. */
const errorOf = (outcome: GateOutcome): Refusal => {
  expect(outcome.forward).toBe(false);
  const reply = JSON.parse(outcome.reply!) as { error?: unknown; result: Record<string, unknown> };
  expect(reply.error).toBeUndefined();
  expect(reply.result['isError']).toBe(true);
  const [content] = reply.result['content'] as { type: string; text: string }[];
  expect(content!.type).toBe('text');
  const data = (reply.result['_meta'] as Record<string, Record<string, unknown>>)[REFUSAL_META_KEY]!;
  expect(content!.text).toContain(String(data['code']));
  return { message: content!.text, data };
};
const approvalMetaOf = (outcome: GateOutcome): Record<string, unknown> => {
  expect(outcome.forward).toBe(false);
  const result = (JSON.parse(outcome.reply!) as { result: Record<string, unknown> }).result;
  expect(result['isError']).toBe(true);
  return (result['_meta'] as Record<string, Record<string, unknown>>)[APPROVAL_META_KEY]!;
};

describe('CallGate: arguments, with or without a policy', () => {
  const cases: [string, string, string][] = [
    ['a missing required argument', '{"charge":"ch_1","currency":"USD"}', 'ARGUMENTS_INVALID'],
    ['a string amount', refundArguments('"4200"'), 'ARGUMENTS_INVALID'],
    ['4200.0', refundArguments('4200.0'), 'MONEY_INVALID'],
    ['4.2e3', refundArguments('4.2e3'), 'MONEY_INVALID'],
    ['a currency that is not signed', '{"charge":"ch_1","amount_minor":1,"currency":"EUR"}', 'MONEY_INVALID'],
    ['an amount over the ceiling', refundArguments(REFUND_CEILING + 1), 'MONEY_CEILING_EXCEEDED'],
    ['a duplicate key', '{"charge":"ch_1","charge":"ch_2","amount_minor":1,"currency":"USD"}', 'DUPLICATE_KEY'],
  ];
  for (const policy of [null, MONEY_POLICY]) {
    it.each(cases)(
      `refuses %s before anything is asked or forwarded (policy: ${policy !== null})`,
      async (_what, args, code) => {
        const port = scriptedPort({});
        const gate = await gateWith(port, policy);
        const outcome = await decide(gate, toolsCallText(3, 'refund', args));
        const error = errorOf(outcome);
        expect(error.message).toContain('refund');
        expect(error.data).toMatchObject({ code, tool: 'refund', manifest: REFUND_REF });
        expect(typeof error.data['pointer']).toBe('string');
        expect(outcome.events).toEqual([
          expect.objectContaining({ event: 'arguments-refused', code, id: null, digest: null }),
        ]);
        expect(port.steps).toEqual([]);
      },
    );
  }

  it('a valid call is forwarded; a notification that is refused gets no answer', async () => {
    const gate = await gateWith(scriptedPort({}), null);
    expect(await decide(gate, toolsCallText(1, 'refund', refundArguments(4200)))).toEqual({
      forward: true,
      reply: undefined,
      events: [],
      // What the audit log records (issue 29 §3): no policy rule matched, so no action digest.
      audit: {
        toolDigest: selectSignedTool(signedBytes, 'refund', ORIGIN).toolDigest,
        actionDigest: null,
        code: null,
        approvalId: null,
      },
    });
    const notification = '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"refund","arguments":{}}}';
    const outcome = await gate.decideCall('refund', null, encoder.encode(notification));
    expect(outcome).toMatchObject({ forward: false, reply: undefined });
  });

  it('the pointer names the argument refused', async () => {
    const gate = await gateWith(scriptedPort({}), null);
    const outcome = await decide(gate, toolsCallText(2, 'refund', refundArguments('4200.0')));
    expect(errorOf(outcome).data['pointer']).toBe('/amount_minor');
  });
});

describe('CallGate.decideParsedCall: the outcome of decideCall, from the strictly parsed message', () => {
  const script = () => ({
    request: [created(ID_A, digestOf(toolsCallText(5, 'refund', refundArguments(4200)))), created(ID_B, 'sha256:0')],
    consume: [new ToolsealError('APPROVAL_PENDING', 'still pending'), new ToolsealError('APPROVAL_DENIED', 'no')],
  });
  const deep = (depth: number): string =>
    `{"charge":"ch_1","amount_minor":1,"currency":"USD","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
  const texts = [
    toolsCallText(1, 'refund', refundArguments(999)),
    toolsCallText(5, 'refund', refundArguments(4200)),
    toolsCallText(5, 'refund', refundArguments(4200)),
    toolsCallText(5, 'refund', refundArguments(4200)),
    toolsCallText('s', 'refund', refundArguments('4200.0')),
    toolsCallText(2, 'refund', refundArguments(REFUND_CEILING + 1)),
    toolsCallText(3, 'refund', '{"charge":"ch_1","currency":"USD"}'),
    toolsCallText(4, 'refund', '[]'),
    toolsCallText(6, 'refund', refundArguments(4200), { [APPROVAL_META_KEY]: 'not an id' }),
    toolsCallText(7, 'refund', refundArguments(4200), { [APPROVAL_META_KEY]: ID_B }),
    toolsCallText(8, 'refund', deep(61)),
    toolsCallText(9, 'refund', deep(62)),
    toolsCallText(10, 'refund', refundArguments(5, `,"note":"${'é'.repeat(600 * 1024)}"`)),
    ' { "jsonrpc" : "2.0" , "method" : "tools/call" , "params" : { "name" : "refund" , "arguments" : { "charge" : "ch_\\u0031" , "amount_minor" : 1 , "currency" : "USD" } } } ',
  ];

  const refusals = ['MONEY_INVALID', 'MONEY_CEILING_EXCEEDED', 'ARGUMENTS_INVALID', 'ARGUMENTS_INVALID'];
  const expectedCodes = [
    [null, ['forward', 'forward', 'forward', 'forward', ...refusals, 'forward', 'forward']],
    [
      MONEY_POLICY,
      [
        'forward',
        'APPROVAL_REQUIRED',
        'APPROVAL_PENDING',
        'APPROVAL_DENIED',
        ...refusals,
        'BAD_REQUEST',
        'FETCH_FAILED',
      ],
    ],
  ] as const;
  for (const [policy, codesBefore] of expectedCodes) {
    it(`every call in turn, with the same registry answers (policy: ${policy !== null})`, async () => {
      const fromBytes = scriptedPort(script());
      const fromParsed = scriptedPort(script());
      const bytesGate = await gateWith(fromBytes, policy);
      const parsedGate = await gateWith(fromParsed, policy);
      const codes: unknown[] = [];
      for (const text of texts) {
        const message = parseStrictText(text, 256);
        const id = (message as { id?: string | number }).id ?? null;
        const expected = await bytesGate.decideCall('refund', id, encoder.encode(text));
        expect(await parsedGate.decideParsedCall('refund', id, message, text)).toStrictEqual(expected);
        codes.push(expected.forward ? 'forward' : (expected.events.at(-1)?.code ?? null));
      }
      expect(fromParsed.steps).toStrictEqual(fromBytes.steps);
      expect(codes).toEqual([...codesBefore, 'forward', 'DEPTH_LIMIT', 'TOO_LARGE', 'forward']);
    });
  }
});

describe('CallGate: approvals (scripted registry)', () => {
  const text = toolsCallText(5, 'refund', refundArguments(4200, ',"note":"first"'));
  const digest = digestOf(text);

  it('a call below every rule is forwarded without asking', async () => {
    const port = scriptedPort({});
    const outcome = await decide(await gateWith(port), toolsCallText(1, 'refund', refundArguments(999)));
    expect(outcome.forward).toBe(true);
    expect(port.steps).toEqual([]);
  });

  it('asks, answers with a tool result naming the approval, remembers it, consumes it once, then asks again', async () => {
    const port = scriptedPort({
      request: [created(ID_A, digest), created(ID_B, digest)],
      consume: [new ToolsealError('APPROVAL_PENDING', 'still pending'), consumed(ID_A, digest)],
    });
    const gate = await gateWith(port);
    const first = await decide(gate, text);
    expect(approvalMetaOf(first)).toEqual({
      code: 'APPROVAL_REQUIRED',
      id: ID_A,
      digest,
      status: 'pending',
      // The page an operator decides on, not the API (which answers a browser with 401).
      url: `${ORIGIN}/ui/approvals/${ID_A}`,
      apiUrl: `${ORIGIN}/v1/approvals/${ID_A}`,
      expiresAt: '2030-01-01T00:00:00.000Z',
    });
    expect(errorOf(first).data).toMatchObject({ code: 'APPROVAL_REQUIRED', id: ID_A, digest });
    const firstText = (JSON.parse(first.reply!) as { result: { content: { text: string }[] } }).result.content[0]!.text;
    expect(firstText).toContain(`${ORIGIN}/ui/approvals/${ID_A}`);
    expect(firstText).not.toContain('/v1/approvals/');
    expect(firstText).toContain(ID_A);
    expect(firstText).toContain(digest);
    expect(first.events).toEqual([
      expect.objectContaining({ event: 'approval-requested', id: ID_A, digest, code: 'APPROVAL_REQUIRED' }),
    ]);
    // The envelope travels with the arguments exactly as the call sent them.
    const envelope = port.steps[0]!.envelope;
    expect(envelope).toContain(`"arguments":${refundArguments(4200, ',"note":"first"')}`);
    expect(readActionRequest(encoder.encode(envelope))).toMatchObject({
      audience: HOST_NAME,
      registry: ORIGIN,
      tool: 'refund',
    });

    const pending = await decide(gate, text);
    expect(approvalMetaOf(pending)['id']).toBe(ID_A);
    expect(pending.events.map((event) => event.event)).toEqual(['approval-pending']);

    const forwarded = await decide(gate, text);
    expect(forwarded).toMatchObject({ forward: true, reply: undefined });
    expect(forwarded.events).toEqual([
      expect.objectContaining({ event: 'approval-consumed', id: ID_A, digest, code: null }),
    ]);

    const again = await decide(gate, text);
    expect(approvalMetaOf(again)['id']).toBe(ID_B);
    expect(port.steps.map((step) => `${step.kind}:${step.id ?? ''}`)).toEqual([
      'request:',
      `consume:${ID_A}`,
      `consume:${ID_A}`,
      'request:',
    ]);
  });

  it('an identical approved request is consumed at once', async () => {
    const port = scriptedPort({
      request: [created(ID_A, digest, 'approved', false)],
      consume: [consumed(ID_A, digest)],
    });
    const outcome = await decide(await gateWith(port), text);
    expect(outcome.forward).toBe(true);
    expect(outcome.events.map((event) => event.event)).toEqual(['approval-consumed']);
  });

  it.each(['APPROVAL_EXPIRED', 'APPROVAL_CONSUMED', 'NOT_FOUND'] as const)(
    'a remembered approval the registry calls %s is forgotten and a new one requested',
    async (code) => {
      const port = scriptedPort({
        request: [created(ID_A, digest), created(ID_B, digest)],
        consume: [new ToolsealError(code, 'no')],
      });
      const gate = await gateWith(port);
      await decide(gate, text);
      const outcome = await decide(gate, text);
      expect(approvalMetaOf(outcome)['id']).toBe(ID_B);
      expect(outcome.events.map((event) => `${event.event}:${event.code}`)).toEqual([
        `approval-refused:${code}`,
        'approval-requested:APPROVAL_REQUIRED',
      ]);
    },
  );

  it('a denial is sticky until its approval expires: the identical call is APPROVAL_DENIED at once, logged once', async () => {
    const port = scriptedPort({
      request: [created(ID_A, digest), created(ID_B, digest)],
      consume: [new ToolsealError('APPROVAL_DENIED', 'denied by alice')],
    });
    let now = Date.parse('2029-12-31T23:50:00.000Z');
    const gate = await CallGate.open({
      signedBytes,
      registry: ORIGIN,
      policy: MONEY_POLICY,
      approvals: port,
      now: () => now,
    });
    await decide(gate, text);
    const first = await decide(gate, text);
    expect(errorOf(first).data).toMatchObject({ code: 'APPROVAL_DENIED', id: ID_A, digest, tool: 'refund' });
    expect(first.events.map((event) => event.event)).toEqual(['approval-refused']);
    // The identical retry: denied at once, nothing asked of the registry, no second event.
    const retry = await decide(gate, text);
    expect(errorOf(retry).data).toMatchObject({ code: 'APPROVAL_DENIED', id: ID_A, digest });
    expect(retry.events).toEqual([]);
    expect(port.steps.map((step) => step.kind)).toEqual(['request', 'consume']);
    // Once the denied approval has expired (2030-01-01), the identical call asks anew.
    now = Date.parse('2030-01-01T00:00:01.000Z');
    expect(approvalMetaOf(await decide(gate, text))['id']).toBe(ID_B);
  });

  it('an identical request the registry answers with its denied approval is APPROVAL_DENIED, and sticky', async () => {
    const port = scriptedPort({ request: [{ ...created(ID_A, digest), status: 'denied', created: false }] });
    const gate = await gateWith(port);
    expect(errorOf(await decide(gate, text)).data).toMatchObject({ code: 'APPROVAL_DENIED', id: ID_A, digest });
    expect(errorOf(await decide(gate, text)).data).toMatchObject({ code: 'APPROVAL_DENIED', id: ID_A });
    expect(port.steps.map((step) => step.kind)).toEqual(['request']);
  });

  it('an id named in params._meta is consumed; the registry refusal comes back with its code', async () => {
    const port = scriptedPort({
      consume: [new ToolsealError('APPROVAL_DIGEST_MISMATCH', 'another call'), consumed(ID_B, digest)],
    });
    const gate = await gateWith(port);
    const named = toolsCallText(6, 'refund', refundArguments(4200), { [APPROVAL_META_KEY]: ID_B });
    const mismatch = errorOf(await decide(gate, named));
    expect(mismatch.data).toMatchObject({ code: 'APPROVAL_DIGEST_MISMATCH', id: ID_B });
    // The `_meta` of guard's own answer works as well.
    const echoed = toolsCallText(7, 'refund', refundArguments(4200), { [APPROVAL_META_KEY]: { id: ID_B } });
    expect((await decide(gate, echoed)).forward).toBe(true);
    expect(port.steps.map((step) => step.id)).toEqual([ID_B, ID_B]);
  });

  it('a malformed approval id is BAD_REQUEST and nothing is asked', async () => {
    const port = scriptedPort({});
    const named = toolsCallText(6, 'refund', refundArguments(4200), { [APPROVAL_META_KEY]: 'apr_short' });
    const error = errorOf(await decide(await gateWith(port), named));
    expect(error.data).toMatchObject({ code: 'BAD_REQUEST', pointer: '/params/_meta/io.toolseal~1approval' });
    expect(port.steps).toEqual([]);
  });

  it('fails closed: a registry that cannot be reached is FETCH_FAILED and nothing is forwarded', async () => {
    const port = scriptedPort({ request: [new TypeError('fetch failed')] });
    const outcome = await decide(await gateWith(port), text);
    expect(errorOf(outcome).data).toMatchObject({ code: 'FETCH_FAILED', digest });
    expect(outcome.events.map((event) => event.event)).toEqual(['approval-refused']);
  });

  it('refuses a request whose digest the registry computed otherwise', async () => {
    const port = scriptedPort({ request: [created(ID_A, `sha256:${'0'.repeat(64)}`)] });
    expect(errorOf(await decide(await gateWith(port), text)).data['code']).toBe('APPROVAL_DIGEST_MISMATCH');
  });

  it('refuses a consumption the registry reports for another digest (nothing is forwarded)', async () => {
    const port = scriptedPort({
      request: [created(ID_A, digest, 'approved', false)],
      consume: [consumed(ID_A, `sha256:${'1'.repeat(64)}`)],
    });
    const outcome = await decide(await gateWith(port), text);
    expect(errorOf(outcome).data).toMatchObject({ code: 'APPROVAL_DIGEST_MISMATCH', id: ID_A });
  });

  it('remembers a bounded number of approvals (the oldest is forgotten first)', async () => {
    const other = toolsCallText(8, 'refund', refundArguments(4300));
    const port = scriptedPort({
      request: [created(ID_A, digest), created(ID_B, digestOf(other)), created(ID_A, digest, 'pending', false)],
    });
    const gate = new CallGate({
      signedBytes,
      registry: ORIGIN,
      policy: MONEY_POLICY,
      approvals: port,
      audience: HOST_NAME,
      maxRemembered: 1,
    });
    await decide(gate, text);
    await decide(gate, other);
    const outcome = await decide(gate, text);
    expect(outcome.events.map((event) => event.event)).toEqual(['approval-pending']);
    expect(port.steps.map((step) => step.kind)).toEqual(['request', 'request', 'request']);
  });

  it('open: the audience is the host the token belongs to; another principal or no API is refused', async () => {
    const gate = await gateWith(scriptedPort({}));
    expect(gate.audience).toBe(HOST_NAME);
    const operator = { ...scriptedPort({}), whoami: async () => ({ kind: 'operator' as const, name: 'alice' }) };
    await expect(gateWith(operator)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(CallGate.open({ signedBytes, registry: ORIGIN, policy: MONEY_POLICY })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
  });
});

describe('CallGate against the real registry', () => {
  let reg: ApprovalRegistry;
  beforeAll(async () => {
    reg = await startApprovalRegistry();
  });
  afterAll(async () => {
    await reg?.close();
  });

  const call = (id: number, args: string, meta?: Record<string, unknown>) => toolsCallText(id, 'refund', args, meta);

  it('pending, approved and consumed once; APPROVAL_PENDING, APPROVAL_CONSUMED and APPROVAL_DIGEST_MISMATCH as codes', async () => {
    const gate = await openGate(reg, MONEY_POLICY);
    expect(gate.audience).toBe(HOST_NAME);
    const text = call(1, refundArguments(4200));
    const meta = approvalMetaOf(await decide(gate, text));
    const id = meta['id'] as string;
    expect(meta['digest']).toBe(digestOf(text, reg.origin, reg.signedBytes)); // the registry recomputed the same
    // Still pending, named explicitly: the registry's code.
    expect(errorOf(await decide(gate, call(2, refundArguments(4200), { [APPROVAL_META_KEY]: id }))).data['code']).toBe(
      'APPROVAL_PENDING',
    );
    await reg.operator.decide(id, { decision: 'approve', digest: meta['digest'] as string });
    // Another amount naming this approval: the registry recomputes the digest and refuses.
    const other = errorOf(await decide(gate, call(3, refundArguments(4201), { [APPROVAL_META_KEY]: id })));
    expect(other.data).toMatchObject({ code: 'APPROVAL_DIGEST_MISMATCH', id });
    expect((await decide(gate, call(4, refundArguments(4200)))).forward).toBe(true);
    const reused = errorOf(await decide(gate, call(5, refundArguments(4200), { [APPROVAL_META_KEY]: id })));
    expect(reused.data['code']).toBe('APPROVAL_CONSUMED');
    expect((await reg.host.get(id)).status).toBe('consumed');
  });

  it('APPROVAL_DENIED and APPROVAL_EXPIRED', async () => {
    const gate = await openGate(reg, MONEY_POLICY);
    const denied = approvalMetaOf(await decide(gate, call(1, refundArguments(1500))));
    await reg.operator.decide(denied['id'] as string, { decision: 'deny', digest: denied['digest'] as string });
    expect(errorOf(await decide(gate, call(2, refundArguments(1500)))).data['code']).toBe('APPROVAL_DENIED');

    const expiring = approvalMetaOf(await decide(gate, call(3, refundArguments(1600))));
    await reg.operator.decide(expiring['id'] as string, { decision: 'approve', digest: expiring['digest'] as string });
    reg.advance(16 * 60 * 1000);
    const named = call(4, refundArguments(1600), { [APPROVAL_META_KEY]: expiring['id'] });
    expect(errorOf(await decide(gate, named)).data['code']).toBe('APPROVAL_EXPIRED');
    // Remembered and expired: forgotten, and a new request is made.
    const renewed = approvalMetaOf(await decide(gate, call(5, refundArguments(1600))));
    expect(renewed['id']).not.toBe(expiring['id']);
  });

  it('an operator token fails at open (FORBIDDEN): guard needs a host token', async () => {
    const operatorGate = CallGate.open({
      signedBytes: reg.signedBytes,
      registry: reg.origin,
      policy: MONEY_POLICY,
      approvals: reg.operator,
    });
    await expect(operatorGate).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});
