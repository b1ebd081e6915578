// The guard around any MCP SDK client Transport (MCP 2025-06-18 "Transports": stdio, Streamable HTTP, custom).

import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { GuardDecision, GuardFinding, GuardMessage } from './guard-types.ts';
import type { ToolGuard } from './tool-guard.ts';
import { toError } from '../core/errors.ts';

// Type-only imports from the SDK: importing `toolseal/host` must not load the SDK's schemas at run time.

export interface GuardedTransportOptions {
  onFinding?: (finding: GuardFinding) => void;
}

/**
 * An SDK client Transport that puts `guard` between an SDK Client and the transport to a server. The Client only
 * ever receives signed tools; refused calls are answered locally. A strict refusal closes the inner transport.
 */
export class GuardedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  constructor(
    private readonly inner: Transport,
    private readonly guard: ToolGuard,
    private readonly options: GuardedTransportOptions = {},
  ) {}

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
      const decision = this.guard.fromServer(message);
      this.report(decision);
      if (decision.forward === 'original') this.deliver(message);
      else if (decision.forward !== undefined) this.deliverAll(decision.forward);
      if (decision.reply !== undefined)
        void this.sendAll(decision.reply).catch((error: unknown) => this.onerror?.(toError(error)));
      if (decision.terminate) void this.inner.close().catch(() => undefined);
    };
    await this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const decision = this.guard.fromClient(message);
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

  private report(decision: GuardDecision): void {
    if (this.options.onFinding) for (const finding of decision.findings) this.options.onFinding(finding);
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
