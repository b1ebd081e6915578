// GuardSession.fromClient with a message the caller read strictly from its text (the HTTP guard): the same decision
// as when the gate reads each call from the text's bytes itself, for single calls and JSON-RPC 2.0 §6 batches.

import { describe, expect, it, vi } from 'vitest';
import { CallGate } from '../../../src/guard/core/call-gate.ts';
import { GuardSession, ToolGuard } from '../../../src/guard/index.ts';
import { parseStrictText } from '../../../src/pipeline/index.ts';
import { REFUND_CEILING, refundManifestBytes } from '../../fixtures/refund-tools.ts';
import { refundArguments, toolsCallText } from '../approval-helpers.ts';
import { runPipeline } from '../../../src/pipeline/index.ts';

const signedBytes = runPipeline(refundManifestBytes()).canonicalBytes;

async function openSession(): Promise<GuardSession & { gate: CallGate }> {
  const gate = await CallGate.open({ signedBytes, registry: 'http://127.0.0.1:1' });
  return new GuardSession(new ToolGuard(signedBytes), gate) as GuardSession & { gate: CallGate };
}

const texts = [
  toolsCallText(1, 'refund', refundArguments(999)),
  toolsCallText(2, 'refund', refundArguments(REFUND_CEILING + 1)),
  toolsCallText(3, 'refund', '{"charge":"ch_1","currency":"USD"}'),
  toolsCallText(4, 'unknown-tool', refundArguments(1)),
  `[${toolsCallText(5, 'refund', refundArguments(5))} , {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},${toolsCallText(6, 'refund', refundArguments('5.5'))}]`,
  `[ ${toolsCallText(7, 'refund', refundArguments(7))}, ${toolsCallText(8, 'refund', refundArguments(8))} ]`,
];

describe('GuardSession.fromClient(message, text, parsedFromText)', () => {
  for (const text of texts) {
    it(`decides ${text.slice(0, 60)}… as from the bytes`, async () => {
      const message = parseStrictText(text, 256);
      const fromBytes = await (await openSession()).fromClient(message, text);
      const fromParsed = await (await openSession()).fromClient(message, text, true);
      expect(fromParsed).toStrictEqual(fromBytes);
    });
  }

  it('refuses a call with bad arguments alike in both ways, and forwards good ones as the original text', async () => {
    const good = toolsCallText(1, 'refund', refundArguments(999));
    const bad = toolsCallText(2, 'refund', refundArguments(REFUND_CEILING + 1));
    const session = await openSession();
    const parsedCalls = vi.spyOn(session.gate, 'decideParsedCall');
    const byteCalls = vi.spyOn(session.gate, 'decideCall');
    expect((await session.fromClient(parseStrictText(good, 256), good, true)).forward).toBe('original');
    const refused = await session.fromClient(parseStrictText(bad, 256), bad, true);
    expect(refused.forward).toBeUndefined();
    expect(JSON.parse(refused.reply!.text)).toMatchObject({
      id: 2,
      result: { isError: true, _meta: { 'io.toolseal/refusal': { code: 'MONEY_CEILING_EXCEEDED' } } },
    });
    // Read from the parsed message both times, never parsed again from bytes; without the flag, from the bytes.
    expect([parsedCalls.mock.calls.length, byteCalls.mock.calls.length]).toEqual([2, 0]);
    await session.fromClient(parseStrictText(good, 256), good);
    expect([parsedCalls.mock.calls.length, byteCalls.mock.calls.length]).toEqual([2, 1]);
  });
});
