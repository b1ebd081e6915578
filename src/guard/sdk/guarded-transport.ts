// The guard around any MCP SDK client Transport (MCP 2025-06-18 "Transports": stdio, Streamable HTTP, custom); with a
// CallGate, tools/call arguments are checked and approvals enforced before a call is sent (issue 13 §4).

import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalEvent, CallGate } from '../core/call-gate.ts';
import { GuardSession, type SessionDecision } from '../core/guard-session.ts';
import type { GuardFinding, GuardMessage } from '../core/guard-types.ts';
import type { ToolGuard } from '../core/tool-guard.ts';
import { toError } from '../../core/errors.ts';

// Type-only imports from the SDK: importing `toolseal/host` must not load the SDK's schemas at run time.

export interface GuardedTransportOptions {
  onFinding?: (finding: GuardFinding) => void;
  /** Argument checks and approvals for tools/call; without it the ToolGuard alone decides. */
  gate?: CallGate;
  /** Called for every approval event of the gate. */
  onEvent?: (event: ApprovalEvent) => void;
}

/**
 * An SDK client Transport that puts `guard` between an SDK Client and the transport to a server. The Client only
 * ever receives signed tools; refused calls are answered locally. A strict refusal closes the inner transport.
 */
export class GuardedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  private readonly session: GuardSession;

  constructor(
    private readonly inner: Transport,
    guard: ToolGuard,
    private readonly options: GuardedTransportOptions = {},
  ) {
    this.session = new GuardSession(guard, options.gate);
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onmessage = (message) => {
      const decision = this.session.fromServer(message);
      this.report(decision);
      if (decision.notice !== undefined) this.deliverAll(decision.notice);
      if (decision.forward === 'original') this.deliver(message);
      else if (decision.forward !== undefined) this.deliverAll(decision.forward);
      if (decision.reply !== undefined)
        void this.sendAll(decision.reply).catch((error: unknown) => this.onerror?.(toError(error)));
      if (decision.terminate) void this.inner.close().catch(() => undefined);
    };
    await this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const decision = await this.session.fromClient(message);
    this.report(decision);
    if (decision.reply !== undefined) {
      const reply = decision.reply;
      queueMicrotask(() => this.deliverAll(reply));
    }
    if (decision.forward === 'original') await this.inner.send(message, options);
    else if (decision.forward !== undefined) await this.sendAll(decision.forward, options);
  }

  async close(): Promise<void> {
    await this.inner.close();
  }

  private report(decision: SessionDecision): void {
    if (this.options.onFinding) for (const finding of decision.findings) this.options.onFinding(finding);
    if (this.options.onEvent) for (const event of decision.events) this.options.onEvent(event);
  }

  private deliver(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }

  /** Fresh objects parsed from the guard's text, so the receiver cannot share structure with the signed view. */
  private deliverAll(outgoing: GuardMessage): void {
    const parsed = JSON.parse(outgoing.text) as JSONRPCMessage | JSONRPCMessage[];
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) this.deliver(message);
  }

  private async sendAll(outgoing: GuardMessage, options?: TransportSendOptions): Promise<void> {
    for (const message of Array.isArray(outgoing.message) ? outgoing.message : [outgoing.message])
      await this.inner.send(message, options);
  }
}
