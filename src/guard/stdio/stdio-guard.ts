// The stdio proxy (MCP 2025-06-18 "Transports" §stdio): newline-delimited JSON-RPC between a client and a spawned server.
//
// Messages the ToolGuard does not rewrite pass through byte for byte; a client message it changes keeps every other
// byte (the guard is given the line's text). With a CallGate (issue 13 §4), each tools/call is checked from the
// line's exact bytes and may wait for the registry: client lines are decided strictly in order, so a later line never
// overtakes one still waiting. The only module of the guard that starts a process.

import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import type { ApprovalEvent, CallGate } from '../core/call-gate.ts';
import { GuardSession } from '../core/guard-session.ts';
import { GUARD_PARSE_ERROR_CODE, type GuardDecision, type GuardFinding } from '../core/guard-types.ts';
import { selectServerEnvironment } from './server-environment.ts';
import { LineSplitter, decodeLine, parseLine, terminateLine } from './stdio-framing.ts';
import { buildMessage, type ToolGuard } from '../core/tool-guard.ts';

export interface StdioGuardOptions {
  guard: ToolGuard;
  /** Argument checks and approvals for tools/call (CallGate); without it the ToolGuard alone decides. */
  gate?: CallGate;
  /**
   * Rewrites each client message forwarded to the server, after the guard decided (and the gate computed the action
   * digest): `guard` with OTEL_* adds `params._meta.traceparent` (issue 29 §2). The text is one JSON message or batch.
   */
  rewriteForwarded?: (text: string) => string;
  /** The session to run (composeGuard's, with its observer); default a new GuardSession of `guard` and `gate`. */
  session?: GuardSession;
  /** Called for every approval event (default: one JSON line on `errorOutput`, as findings). */
  onEvent?: (event: ApprovalEvent) => void;
  /** The MCP server to start, and its arguments (no shell). */
  command: string;
  args?: readonly string[];
  /** The server's environment (default: this process's without TOOLSEAL_*, selectServerEnvironment). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The client side: messages from the client arrive on `input`, messages for it go to `output`. */
  input: Readable;
  output: Writable;
  /** Where the server's stderr is forwarded, and where findings go unless `onFinding` is given. */
  errorOutput: Writable;
  /** Called for every finding (default: one JSON line on `errorOutput`). */
  onFinding?: (finding: GuardFinding) => void;
  /** After the server's stdin closes: how long until SIGTERM, and then until SIGKILL (default 2000 ms each). */
  shutdownGraceMs?: number;
  /** Longest accepted line in either direction (default 64 MiB); a longer one ends the session. */
  maxLineBytes?: number;
}

export interface StdioGuardOutcome {
  /** What the guard should exit with: the server's exit code (128 + n after signal n), or 1 when the guard refused the session. */
  exitCode: number;
  serverExitCode: number | null;
  serverSignal: NodeJS.Signals | null;
  /** How the session ended. */
  endedBy: 'server-exit' | 'client-close' | 'refused' | 'signal';
}

export interface StdioGuardSession {
  /** The server's process id. */
  readonly pid: number | undefined;
  /** Settles when the server has exited and everything it sent has been passed on; rejects if it could not start. */
  readonly done: Promise<StdioGuardOutcome>;
  /** Send a signal to the server (SIGTERM by default), escalating to SIGKILL after the grace period. */
  stop(signal?: NodeJS.Signals): void;
}

const DEFAULT_SHUTDOWN_GRACE_MS = 2000;
const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;
/** Client lines waiting for a decision beyond which the client's stream is paused. */
const MAX_QUEUED_CLIENT_LINES = 256;

/**
 * Start the MCP server (`command args`, stdio) and proxy newline-delimited JSON-RPC between it and the client on
 * `input`/`output`, through `guard`. The caller must have verified the signed bytes the guard holds before calling.
 */
export function startStdioGuard(options: StdioGuardOptions): StdioGuardSession {
  const proxy = new StdioProxy(options);
  return {
    get pid() {
      return proxy.pid;
    },
    done: proxy.done,
    stop: (signal: NodeJS.Signals = 'SIGTERM') => proxy.stop(signal),
  };
}

/** One proxied session: the server process, both directions, backpressure and the shutdown escalation. */
class StdioProxy {
  readonly done: Promise<StdioGuardOutcome>;
  private readonly guard: ToolGuard;
  private readonly session: GuardSession;
  /** Client lines are decided one after another: the tail of that chain, and how many wait on it. */
  private clientQueue: Promise<void> = Promise.resolve();
  private queuedLines = 0;
  private pausedForQueue = false;
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly errorOutput: Writable;
  private readonly onFinding: ((finding: GuardFinding) => void) | undefined;
  private readonly graceMs: number;
  private readonly fromClientLines: LineSplitter;
  private readonly fromServerLines: LineSplitter;
  private readonly child: ChildProcess;
  private readonly serverIn: Writable;
  private readonly serverOut: Readable;
  private resolveDone!: (outcome: StdioGuardOutcome) => void;
  private rejectDone!: (error: unknown) => void;
  /** The last bytes written to `errorOutput` by the server did not end a line. */
  private stderrMidLine = false;
  private endedBy: StdioGuardOutcome['endedBy'] | undefined;
  private refused = false;
  private clientStopped = false;
  private closingServer = false;
  private spawned = false;
  private readonly timers: NodeJS.Timeout[] = [];
  /** Destinations that are full, each with one pending 'drain' listener. */
  private readonly draining = new Set<Writable>();

  constructor(private readonly options: StdioGuardOptions) {
    this.guard = options.guard;
    this.session = options.session ?? new GuardSession(options.guard, options.gate);
    this.input = options.input;
    this.output = options.output;
    this.errorOutput = options.errorOutput;
    this.onFinding = options.onFinding;
    this.graceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.fromClientLines = new LineSplitter(maxLineBytes);
    this.fromServerLines = new LineSplitter(maxLineBytes);
    this.done = new Promise<StdioGuardOutcome>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    this.child = spawn(options.command, [...(options.args ?? [])], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: options.env ?? selectServerEnvironment(process.env),
      cwd: options.cwd,
      shell: false,
      windowsHide: true,
    });
    this.serverIn = this.child.stdin!;
    this.serverOut = this.child.stdout!;
    this.listen(this.child.stderr!);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  stop(signal: NodeJS.Signals): void {
    this.endedBy ??= 'signal';
    this.stopReadingClient();
    this.shutDownServer(signal);
  }

  private listen(serverErr: Readable): void {
    this.serverIn.on('error', () => {
      // EPIPE after the server exited: its exit ends the session.
    });
    this.output.on('error', this.onClientEnd);
    this.serverOut.on('data', this.onServerData);
    serverErr.on('data', (chunk: Buffer) => {
      this.errorOutput.write(chunk);
      this.stderrMidLine = chunk.at(-1) !== 0x0a;
    });
    this.child.once('spawn', () => {
      this.spawned = true;
      this.input.on('data', this.onClientData);
      this.input.once('end', this.onClientEnd);
      this.input.once('error', this.onClientEnd);
      this.input.resume();
    });
    this.child.once('error', (error) => {
      if (this.spawned) return;
      this.clearTimers();
      this.rejectDone(
        new Error(`could not start the MCP server ${JSON.stringify(this.options.command)}: ${error.message}`, {
          cause: error,
        }),
      );
    });
    this.child.once('close', (code: number | null, signal: NodeJS.Signals | null) => this.onServerClose(code, signal));
  }

  private report(finding: GuardFinding): void {
    if (this.onFinding !== undefined) {
      this.onFinding(finding);
      return;
    }
    this.errorOutput.write(`${this.stderrMidLine ? '\n' : ''}${JSON.stringify(finding)}\n`);
    this.stderrMidLine = false;
  }

  private reportEvent(event: ApprovalEvent): void {
    if (this.options.onEvent !== undefined) {
      this.options.onEvent(event);
      return;
    }
    this.errorOutput.write(`${this.stderrMidLine ? '\n' : ''}${JSON.stringify(event)}\n`);
    this.stderrMidLine = false;
  }

  private reportDropped(message: string): void {
    this.report({
      event: 'message-dropped',
      manifest: this.guard.subject,
      tool: null,
      reason: 'malformed',
      pointer: '',
      message,
    });
  }

  /** Backpressure: a full destination pauses the stream the data came from until it drains (one listener each). */
  private write(stream: Writable, data: string | Buffer, source: Readable): void {
    if (stream.destroyed || stream.writableEnded) return;
    if (!stream.write(data) && !this.draining.has(stream)) {
      this.draining.add(stream);
      source.pause();
      stream.once('drain', () => {
        this.draining.delete(stream);
        if (!this.refused && !(source === this.input && (this.clientStopped || this.pausedForQueue))) source.resume();
      });
    }
  }

  /** Close the server's stdin and escalate: SIGTERM after the grace period, SIGKILL after another. */
  private shutDownServer(signalNow?: NodeJS.Signals): void {
    if (!this.serverIn.destroyed) this.serverIn.end();
    if (signalNow !== undefined) this.child.kill(signalNow);
    if (this.closingServer) return;
    this.closingServer = true;
    if (signalNow === undefined)
      this.scheduleSignal('SIGTERM', this.graceMs, () => this.scheduleSignal('SIGKILL', this.graceMs));
    else this.scheduleSignal('SIGKILL', this.graceMs);
  }

  /** After `afterMs`, send `signal` if the server is still running, then run `then`. */
  private scheduleSignal(signal: NodeJS.Signals, afterMs: number, then?: () => void): void {
    const timer = setTimeout(() => {
      if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
      then?.();
    }, afterMs);
    timer.unref();
    this.timers.push(timer);
  }

  private clearTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
  }

  private stopReadingClient(): void {
    this.clientStopped = true;
    this.input.off('data', this.onClientData);
    this.input.off('end', this.onClientEnd);
    this.input.off('error', this.onClientEnd);
    this.input.pause();
  }

  private refuse(): void {
    if (this.refused) return;
    this.refused = true;
    this.endedBy = 'refused';
    this.stopReadingClient();
    this.serverOut.off('data', this.onServerData);
    this.shutDownServer('SIGTERM');
  }

  private apply(decision: GuardDecision, line: Buffer, toPeer: Writable, toSender: Writable, source: Readable): void {
    for (const finding of decision.findings) this.report(finding);
    if (decision.notice !== undefined) this.write(toPeer, `${decision.notice.text}\n`, source);
    if (decision.forward === 'original') this.write(toPeer, terminateLine(line), source);
    else if (decision.forward !== undefined) this.write(toPeer, `${decision.forward.text}\n`, source);
    if (decision.reply !== undefined) this.write(toSender, `${decision.reply.text}\n`, source);
    if (decision.terminate) this.refuse();
  }

  private readonly onClientData = (chunk: Buffer): void => {
    let lines: Buffer[];
    try {
      lines = this.fromClientLines.push(chunk);
    } catch (error) {
      this.reportDropped(`client sent ${(error as Error).message}; ending the session`);
      this.onClientEnd();
      return;
    }
    for (const line of lines) this.enqueueClient(() => this.decideClientLine(line));
    if (this.queuedLines >= MAX_QUEUED_CLIENT_LINES && !this.pausedForQueue) {
      this.pausedForQueue = true;
      this.input.pause();
    }
  };

  /** Run `step` after every client line before it has been decided and written. */
  private enqueueClient(step: () => Promise<void> | void): void {
    this.queuedLines++;
    this.clientQueue = this.clientQueue
      .then(step)
      .catch((error: unknown) => this.reportDropped(`a client message could not be decided: ${String(error)}`))
      .finally(() => {
        this.queuedLines--;
        if (this.pausedForQueue && this.queuedLines < MAX_QUEUED_CLIENT_LINES / 2) {
          this.pausedForQueue = false;
          if (!this.clientStopped && !this.refused && !this.draining.has(this.serverIn)) this.input.resume();
        }
      });
  }

  private async decideClientLine(line: Buffer): Promise<void> {
    if (this.refused) return;
    const text = decodeLine(line);
    const message = parseLine(text);
    if (message === undefined) return;
    if (message instanceof Error) {
      this.reportDropped('the client sent a line that is not JSON; answered with a parse error');
      this.answerParseError();
      return;
    }
    // With the line's text, a message the guard changes keeps every other byte.
    let decision = await this.session.fromClient(message, text);
    if (this.refused) return;
    for (const event of decision.events) this.reportEvent(event);
    const rewrite = this.options.rewriteForwarded;
    if (rewrite !== undefined && decision.forward !== undefined) {
      const forwarded = decision.forward === 'original' ? text : decision.forward.text;
      decision = { ...decision, forward: buildMessage(rewrite(forwarded)) };
    }
    this.apply(decision, line, this.serverIn, this.output, this.input);
  }

  private answerParseError(): void {
    const error = { code: GUARD_PARSE_ERROR_CODE, message: 'toolseal guard: parse error' };
    this.write(this.output, `${JSON.stringify({ jsonrpc: '2.0', id: null, error })}\n`, this.input);
  }

  private readonly onServerData = (chunk: Buffer): void => {
    let lines: Buffer[];
    try {
      lines = this.fromServerLines.push(chunk);
    } catch (error) {
      this.reportDropped(`server sent ${(error as Error).message}; ending the session`);
      this.serverOut.off('data', this.onServerData);
      this.shutDownServer('SIGTERM');
      return;
    }
    for (const line of lines) {
      if (this.refused) return;
      const message = parseLine(line);
      if (message === undefined) continue;
      if (message instanceof Error) {
        this.reportDropped('the server wrote a line to stdout that is not JSON; dropped');
        continue;
      }
      this.apply(this.guard.fromServer(message), line, this.output, this.serverIn, this.serverOut);
    }
  };

  private readonly onClientEnd = (): void => {
    if (this.clientStopped) return;
    this.stopReadingClient();
    // Lines still waiting for a decision (the registry) go to the server before its stdin closes.
    this.enqueueClient(() => {
      this.endedBy ??= 'client-close';
      this.shutDownServer();
    });
  };

  /** The server has exited and its streams are closed: settle `done` once the client output has taken everything. */
  private onServerClose(code: number | null, signal: NodeJS.Signals | null): void {
    if (!this.spawned) return;
    this.clearTimers();
    this.stopReadingClient();
    const signalNumber =
      signal === null ? undefined : (osConstants.signals as Record<string, number | undefined>)[signal];
    const outcome: StdioGuardOutcome = {
      exitCode: this.refused ? 1 : (code ?? 128 + (signalNumber ?? 0)),
      serverExitCode: code,
      serverSignal: signal,
      endedBy: this.endedBy ?? 'server-exit',
    };
    if (this.stderrMidLine) this.errorOutput.write('\n');
    if (this.output.destroyed || this.output.writableEnded) this.resolveDone(outcome);
    else this.output.write('', () => this.resolveDone(outcome));
  }
}
