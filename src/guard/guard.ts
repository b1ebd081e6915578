// The verifying MCP proxy (`toolseal guard`): the tools a client sees are the signed tools, taken from the signed bytes.
//
// Three layers, each usable on its own by a host:
//   ToolGuard         pure, message-level: decides what each JSON-RPC message (or batch) becomes. No I/O.
//   startStdioGuard   a newline-delimited JSON-RPC proxy (MCP stdio transport) between a client on two streams and
//                     a server it spawns; messages it does not rewrite pass through byte for byte.
//   GuardedTransport  the same check around any SDK client Transport (stdio, Streamable HTTP, in-memory).
//
// Policy: on every tools/list response, each presented tool is compared with its signed tool after the same pipeline
// stages (checkPresentedTool: refs inlined, name NFC, JCS order). A tool that matches is replaced by the signed tool's
// canonical bytes; one that differs or is not in the manifest is withheld for the rest of the session (and reported);
// with `strict` the session is refused instead. A tools/call naming a tool outside the manifest, or a withheld one,
// is answered with a JSON-RPC error and never reaches the server.

import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolsealError } from '../core/errors.ts';
import {
  canonicalizeToText,
  checkEnvelope,
  computeDigest,
  parseStrict,
  type JsonObject,
  type Sha256Digest,
} from '../pipeline/index.ts';
import { checkPresentedTool, presentableSignedTool } from '../dispatch/dispatch.ts';

// Type-only imports from the SDK: importing `toolseal/host` must not load the SDK's schemas at run time.

/** JSON-RPC error code of a refused tools/call: MCP's code for an unknown tool (Invalid params, the SDK's ErrorCode.InvalidParams). */
export const GUARD_CALL_REFUSED_CODE = -32602;
/** JSON-RPC Parse error (the SDK's ErrorCode.ParseError), answering a client line that is not JSON. */
export const GUARD_PARSE_ERROR_CODE = -32700;
/** JSON-RPC error code answering the tools/list that made a strict guard refuse the session (server-error range). */
export const GUARD_SESSION_REFUSED_CODE = -32090;
/** JSON-RPC error code answering a tools/list whose result is not a list of tools. */
export const GUARD_LIST_REFUSED_CODE = -32091;

export type GuardFindingEvent =
  /** A presented tool differs from its signed definition or is not in the manifest; the client does not see it. */
  | 'tool-withheld'
  /** A tools/call for a tool outside the manifest, or a withheld one, was answered with an error and not forwarded. */
  | 'call-refused'
  /** Strict mode: a finding in a tools/list ended the session. */
  | 'session-refused'
  /** A tools/list result that is not a list of tools was replaced by an error. */
  | 'list-refused'
  /** A line that is not JSON was dropped. */
  | 'message-dropped';

export type GuardFindingReason = 'differs' | 'unknown-tool' | 'withheld' | 'malformed';

/** One thing the guard noticed; the CLI prints each as one JSON line on stderr. */
export interface GuardFinding {
  event: GuardFindingEvent;
  /** `name@version` of the signed manifest. */
  manifest: string;
  /** The tool concerned (NFC), or null when there is none or it has no name. */
  tool: string | null;
  reason: GuardFindingReason;
  /** RFC 6901 pointer of the first difference inside the tool (`/description`, `/_meta`), or into the message. */
  pointer: string;
  message: string;
  /** Position of the tool in the server's tools/list page. */
  index?: number;
}

/** A message the guard built (rather than passed through): the object and its exact serialisation (no newline). */
export interface GuardMessage {
  message: JSONRPCMessage | JSONRPCMessage[];
  text: string;
}

/** What one received message (or batch) becomes. */
export interface GuardDecision {
  /** Towards the other side: `original` (the received message unchanged), a message the guard built, or nothing. */
  forward: 'original' | GuardMessage | undefined;
  /** Answers the guard gives the sender itself (a refused tools/call). */
  reply: GuardMessage | undefined;
  findings: GuardFinding[];
  /** Strict mode refused the session: deliver `forward` and `reply`, then end the session. */
  terminate: boolean;
}

export interface ToolGuardOptions {
  /** Refuse the whole session on the first tool that differs or is unknown, instead of withholding it. */
  strict?: boolean;
  /** When given, the signed bytes must hash to it (from a verified attestation or a lockfile). */
  expectedDigest?: Sha256Digest;
}

/** One message's fate: `original`, or the exact text of what replaces it / answers it (JSON, no newline). */
type Part = { forward: 'original' | string | undefined; reply: string | undefined; terminate?: boolean };

/** A built message whose object form is parsed from its text only when asked for (the stdio proxy never asks). */
function built(text: string): GuardMessage {
  let parsed: JSONRPCMessage | JSONRPCMessage[] | undefined;
  return {
    text,
    get message() {
      parsed ??= JSON.parse(text) as JSONRPCMessage | JSONRPCMessage[];
      return parsed;
    },
  };
}

interface SignedEntry {
  tool: JsonObject;
  /** JCS text of the tool as a server presents it (without the registry-only `capabilities`): a slice of the signed bytes. */
  text: string;
}

/**
 * The message-level guard for one session with one server. Holds the signed manifest (from its bytes), the ids of
 * pending tools/list requests, and the tools withheld so far. Feed it every message in order; it does no I/O.
 */
export class ToolGuard {
  readonly name: string;
  readonly version: string;
  readonly digest: Sha256Digest;
  readonly strict: boolean;
  private readonly manifest: JsonObject;
  private readonly signed = new Map<string, SignedEntry>();
  private readonly withheld = new Set<string>();
  /** Client request ids of tools/list requests awaiting their response (`s:` or `n:` prefixed), with a count. */
  private readonly pendingLists = new Map<string, number>();
  private refused = false;

  constructor(signedBytes: Uint8Array, options: ToolGuardOptions = {}) {
    this.digest = computeDigest(signedBytes);
    if (options.expectedDigest !== undefined && options.expectedDigest !== this.digest) {
      throw new ToolsealError('DIGEST_MISMATCH', `signed bytes hash to ${this.digest}, not ${options.expectedDigest}`);
    }
    // A signed manifest may be larger and deeper than an upload (refs are inlined), hence the wide limits.
    const parsed = parseStrict(signedBytes, { maxBytes: Number.MAX_SAFE_INTEGER, maxDepth: 1000 });
    const manifest = checkEnvelope(parsed);
    if (canonicalizeToText(parsed.value) !== Buffer.from(signedBytes).toString('utf8')) {
      throw new ToolsealError(
        'INVALID_MANIFEST',
        'the signed bytes are not in canonical form (RFC 8785); they were not produced by the publish pipeline',
      );
    }
    this.manifest = parsed.value as JsonObject;
    this.name = manifest.name;
    this.version = manifest.version;
    this.strict = options.strict ?? false;
    for (const tool of this.manifest['tools'] as JsonObject[]) {
      const presentable = presentableSignedTool(tool);
      this.signed.set(tool['name'] as string, { tool: presentable, text: canonicalizeToText(presentable) });
    }
  }

  /** `name@version`. */
  get subject(): string {
    return `${this.name}@${this.version}`;
  }

  /** Names of the signed tools, in manifest order. */
  get toolNames(): string[] {
    return [...this.signed.keys()];
  }

  /** Names withheld so far in this session. */
  get withheldTools(): string[] {
    return [...this.withheld];
  }

  /** True once a strict guard has refused the session: every later message is dropped. */
  get isRefused(): boolean {
    return this.refused;
  }

  /** The signed tool as the client sees it (a copy), or undefined. */
  signedTool(name: string): JsonObject | undefined {
    const entry = this.signed.get(name);
    return entry === undefined ? undefined : (JSON.parse(entry.text) as JsonObject);
  }

  /** A message (or batch) from the client, bound for the server. */
  fromClient(message: unknown): GuardDecision {
    return this.decide(message, (item, findings) => this.clientMessage(item, findings));
  }

  /** A message (or batch) from the server, bound for the client. */
  fromServer(message: unknown): GuardDecision {
    return this.decide(message, (item, findings) => this.serverMessage(item, findings));
  }

  private decide(message: unknown, one: (item: unknown, findings: GuardFinding[]) => Part): GuardDecision {
    const findings: GuardFinding[] = [];
    if (this.refused) return { forward: undefined, reply: undefined, findings, terminate: true };
    if (!Array.isArray(message)) {
      const part = one(message, findings);
      return {
        forward: part.forward === 'original' || part.forward === undefined ? part.forward : built(part.forward),
        reply: part.reply === undefined ? undefined : built(part.reply),
        findings,
        terminate: part.terminate ?? false,
      };
    }
    // A batch (JSON-RPC 2.0 §6; MCP 2025-03-26): each member is decided alone; answers go back as one batch.
    const parts = message.map((item) => ({ item, part: one(item, findings) }));
    const terminate = parts.some(({ part }) => part.terminate === true);
    const unchanged = parts.every(({ part }) => part.forward === 'original');
    const forwardTexts: string[] = [];
    const replyTexts: string[] = [];
    for (const { item, part } of parts) {
      if (part.forward === 'original') forwardTexts.push(JSON.stringify(item));
      else if (part.forward !== undefined) forwardTexts.push(part.forward);
      if (part.reply !== undefined) replyTexts.push(part.reply);
    }
    return {
      forward:
        unchanged && message.length > 0
          ? 'original'
          : forwardTexts.length === 0
            ? undefined
            : built(`[${forwardTexts.join(',')}]`),
      reply: replyTexts.length === 0 ? undefined : built(`[${replyTexts.join(',')}]`),
      findings,
      terminate,
    };
  }

  private clientMessage(item: unknown, findings: GuardFinding[]): Part {
    const pass: Part = { forward: 'original', reply: undefined };
    if (!isObject(item) || typeof item['method'] !== 'string') return pass;
    const id = requestIdOf(item);
    if (item['method'] === 'tools/list' && id !== undefined) {
      const key = idKey(id);
      this.pendingLists.set(key, (this.pendingLists.get(key) ?? 0) + 1);
      return pass;
    }
    if (item['method'] !== 'tools/call') return pass;
    const params = item['params'];
    const name = isObject(params) && typeof params['name'] === 'string' ? params['name'] : null;
    let reason: GuardFindingReason | undefined;
    let why = '';
    if (name === null) {
      reason = 'malformed';
      why = 'the tools/call names no tool';
    } else if (!this.signed.has(name)) {
      reason = 'unknown-tool';
      why = `tool ${JSON.stringify(name)} is not in the signed manifest ${this.subject}`;
    } else if (this.withheld.has(name)) {
      reason = 'withheld';
      why = `tool ${JSON.stringify(name)} was withheld: the server presented it differently from its signed definition in ${this.subject}`;
    }
    if (reason === undefined) return pass;
    findings.push({
      event: 'call-refused',
      manifest: this.subject,
      tool: name,
      reason,
      pointer: '/params/name',
      message: why,
    });
    if (id === undefined) return { forward: undefined, reply: undefined };
    const reply: JSONRPCMessage = {
      jsonrpc: '2.0',
      id,
      error: {
        code: GUARD_CALL_REFUSED_CODE,
        message: `toolseal guard: ${why}`,
        data: { code: 'DISPATCH_MISMATCH', reason, tool: name, manifest: this.subject },
      },
    };
    return { forward: undefined, reply: JSON.stringify(reply) };
  }

  private serverMessage(item: unknown, findings: GuardFinding[]): Part {
    const pass: Part = { forward: 'original', reply: undefined };
    if (!isObject(item)) return pass;
    // A message is a response by its id and result/error, whatever else it carries: one that answers a pending
    // tools/list is always checked, even if it also has a `method` member that a lenient client might ignore.
    const isResponse = 'result' in item || 'error' in item;
    if (!isResponse && 'method' in item) return pass;
    const id = requestIdOf(item);
    if (id === undefined) return pass;
    const key = idKey(id);
    const pending = this.pendingLists.get(key);
    if (pending === undefined) return pass;
    if (pending > 1) this.pendingLists.set(key, pending - 1);
    else this.pendingLists.delete(key);
    if ('error' in item && !('result' in item)) return pass;
    return this.toolsListResponse(item, id, findings);
  }

  /** Rewrite one tools/list response: signed tools for those that match, nothing for the rest. */
  private toolsListResponse(response: Record<string, unknown>, id: string | number, findings: GuardFinding[]): Part {
    const result = response['result'];
    const presented = isObject(result) ? result['tools'] : undefined;
    if (!isObject(result) || !Array.isArray(presented)) {
      const message = 'the server answered tools/list with something that is not a list of tools';
      findings.push({
        event: 'list-refused',
        manifest: this.subject,
        tool: null,
        reason: 'malformed',
        pointer: '/result/tools',
        message,
      });
      const error: JSONRPCMessage = {
        jsonrpc: '2.0',
        id,
        error: { code: GUARD_LIST_REFUSED_CODE, message: `toolseal guard: ${message}` },
      };
      return { forward: JSON.stringify(error), reply: undefined };
    }

    const passing: { name: string; index: number }[] = [];
    const failed = new Set<string>();
    const pageFindings: GuardFinding[] = [];
    presented.forEach((tool, index) => {
      const check = checkPresentedTool(this.manifest, tool);
      if (check.ok) {
        passing.push({ name: check.signedTool['name'] as string, index });
        return;
      }
      const name = presentedName(tool);
      if (name !== null) failed.add(name);
      pageFindings.push({
        event: 'tool-withheld',
        manifest: this.subject,
        tool: name,
        reason: check.reason,
        pointer: check.pointer,
        message: check.message,
        index,
      });
    });

    if (this.strict && pageFindings.length > 0) {
      this.refused = true;
      const first = pageFindings[0]!;
      findings.push(...pageFindings.map((finding) => ({ ...finding, event: 'session-refused' as const })));
      const error: JSONRPCMessage = {
        jsonrpc: '2.0',
        id,
        error: {
          code: GUARD_SESSION_REFUSED_CODE,
          message: `toolseal guard refused the session (strict): ${first.message}`,
          data: {
            code: 'DISPATCH_MISMATCH',
            manifest: this.subject,
            findings: pageFindings.map(({ tool, reason, pointer }) => ({ tool, reason, pointer })),
          },
        },
      };
      return { forward: JSON.stringify(error), reply: undefined, terminate: true };
    }

    findings.push(...pageFindings);
    for (const name of failed) this.withheld.add(name);
    const shown = new Set<string>();
    const texts: string[] = [];
    for (const { name, index } of passing) {
      if (shown.has(name)) continue;
      if (this.withheld.has(name)) {
        if (!failed.has(name)) {
          findings.push({
            event: 'tool-withheld',
            manifest: this.subject,
            tool: name,
            reason: 'withheld',
            pointer: '',
            message: `tool ${JSON.stringify(name)} matches its signed definition now but differed earlier in this session; it stays withheld`,
            index,
          });
        }
        continue;
      }
      shown.add(name);
      texts.push(this.signed.get(name)!.text);
    }

    return { forward: serialiseListResponse(response, result, texts), reply: undefined };
  }
}

/** The response with its `tools` replaced by the given JCS texts; every other member kept (re-serialised). */
function serialiseListResponse(
  response: Record<string, unknown>,
  result: Record<string, unknown>,
  toolTexts: string[],
): string {
  const members = (object: Record<string, unknown>, skip: string): string[] =>
    Object.keys(object)
      .filter((key) => key !== skip && object[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${JSON.stringify(object[key])}`);
  const resultText = `{${[...members(result, 'tools'), `"tools":[${toolTexts.join(',')}]`].join(',')}}`;
  return `{${[...members(response, 'result'), `"result":${resultText}`].join(',')}}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function requestIdOf(message: Record<string, unknown>): string | number | undefined {
  const id = message['id'];
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** 1 and "1" are different JSON-RPC ids. */
function idKey(id: string | number): string {
  return typeof id === 'string' ? `s:${id}` : `n:${id}`;
}

function presentedName(tool: unknown): string | null {
  return isObject(tool) && typeof tool['name'] === 'string' ? tool['name'].normalize('NFC') : null;
}

// ── stdio proxy ─────────────────────────────────────────────────────────────

export interface StdioGuardOptions {
  guard: ToolGuard;
  /** The MCP server to start, and its arguments (no shell). */
  command: string;
  args?: readonly string[];
  /** The server's environment (default: this process's). */
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

/** Splits a byte stream into lines, each returned with its `\n`; no copy of a line that arrives in one chunk. */
class LineSplitter {
  private pending: Buffer[] = [];
  private pendingLength = 0;

  constructor(private readonly maxLineBytes: number) {}

  push(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, newline + 1);
      if (this.pendingLength > 0) {
        lines.push(Buffer.concat([...this.pending, piece]));
        this.pending = [];
        this.pendingLength = 0;
      } else {
        lines.push(piece);
      }
      start = newline + 1;
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingLength += chunk.length - start;
      if (this.pendingLength > this.maxLineBytes)
        throw new RangeError(`a message longer than ${this.maxLineBytes} bytes`);
    }
    return lines;
  }
}

/** Decode one line; undefined for a blank line, an Error for one that is not JSON. */
function parseLine(line: Buffer): unknown {
  const text = line.toString('utf8').trim();
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Start the MCP server (`command args`, stdio) and proxy newline-delimited JSON-RPC between it and the client on
 * `input`/`output`, through `guard`. The caller must have verified the signed bytes the guard holds before calling.
 */
export function startStdioGuard(options: StdioGuardOptions): StdioGuardSession {
  const { guard, input, output, errorOutput } = options;
  const grace = options.shutdownGraceMs ?? 2000;
  const maxLineBytes = options.maxLineBytes ?? 64 * 1024 * 1024;
  const fromClientLines = new LineSplitter(maxLineBytes);
  const fromServerLines = new LineSplitter(maxLineBytes);

  let stderrMidLine = false;
  const report =
    options.onFinding ??
    ((finding: GuardFinding): void => {
      errorOutput.write(`${stderrMidLine ? '\n' : ''}${JSON.stringify(finding)}\n`);
      stderrMidLine = false;
    });

  const child: ChildProcess = spawn(options.command, [...(options.args ?? [])], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: options.env ?? process.env,
    cwd: options.cwd,
    shell: false,
    windowsHide: true,
  });
  const serverIn = child.stdin!;
  const serverOut = child.stdout!;
  const serverErr = child.stderr!;

  let endedBy: StdioGuardOutcome['endedBy'] | undefined;
  let refused = false;
  let clientStopped = false;
  let closingServer = false;
  const timers: NodeJS.Timeout[] = [];

  let resolveDone!: (outcome: StdioGuardOutcome) => void;
  let rejectDone!: (error: unknown) => void;
  const done = new Promise<StdioGuardOutcome>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });

  // Backpressure: a full destination pauses the stream the data came from until it drains (one listener each).
  const draining = new Set<Writable>();
  const write = (stream: Writable, data: string | Buffer, source: Readable): void => {
    if (stream.destroyed || stream.writableEnded) return;
    if (!stream.write(data) && !draining.has(stream)) {
      draining.add(stream);
      source.pause();
      stream.once('drain', () => {
        draining.delete(stream);
        if (!refused && !(source === input && clientStopped)) source.resume();
      });
    }
  };

  /** Close the server's stdin and escalate: SIGTERM after the grace period, SIGKILL after another. */
  const shutDownServer = (signalNow?: NodeJS.Signals): void => {
    if (!serverIn.destroyed) serverIn.end();
    if (signalNow !== undefined) child.kill(signalNow);
    if (closingServer) return;
    closingServer = true;
    const escalate = (signal: NodeJS.Signals, after: number, then?: () => void): void => {
      const timer = setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        then?.();
      }, after);
      timer.unref();
      timers.push(timer);
    };
    if (signalNow === undefined) escalate('SIGTERM', grace, () => escalate('SIGKILL', grace));
    else escalate('SIGKILL', grace);
  };

  const stopReadingClient = (): void => {
    clientStopped = true;
    input.off('data', onClientData);
    input.off('end', onClientEnd);
    input.off('error', onClientEnd);
    input.pause();
  };

  const refuse = (): void => {
    if (refused) return;
    refused = true;
    endedBy = 'refused';
    stopReadingClient();
    serverOut.off('data', onServerData);
    shutDownServer('SIGTERM');
  };

  const apply = (
    decision: GuardDecision,
    line: Buffer,
    toPeer: Writable,
    toSender: Writable,
    source: Readable,
  ): void => {
    for (const finding of decision.findings) report(finding);
    if (decision.forward === 'original')
      write(toPeer, line.at(-1) === 0x0a ? line : Buffer.concat([line, Buffer.from('\n')]), source);
    else if (decision.forward !== undefined) write(toPeer, decision.forward.text + '\n', source);
    if (decision.reply !== undefined) write(toSender, decision.reply.text + '\n', source);
    if (decision.terminate) refuse();
  };

  const onClientData = (chunk: Buffer): void => {
    let lines: Buffer[];
    try {
      lines = fromClientLines.push(chunk);
    } catch (error) {
      report({
        event: 'message-dropped',
        manifest: guard.subject,
        tool: null,
        reason: 'malformed',
        pointer: '',
        message: `client sent ${(error as Error).message}; ending the session`,
      });
      onClientEnd();
      return;
    }
    for (const line of lines) {
      if (refused) return;
      const message = parseLine(line);
      if (message === undefined) continue;
      if (message instanceof Error) {
        report({
          event: 'message-dropped',
          manifest: guard.subject,
          tool: null,
          reason: 'malformed',
          pointer: '',
          message: 'the client sent a line that is not JSON; answered with a parse error',
        });
        write(
          output,
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: GUARD_PARSE_ERROR_CODE, message: 'toolseal guard: parse error' },
          }) + '\n',
          input,
        );
        continue;
      }
      apply(guard.fromClient(message), line, serverIn, output, input);
    }
  };

  const onServerData = (chunk: Buffer): void => {
    let lines: Buffer[];
    try {
      lines = fromServerLines.push(chunk);
    } catch (error) {
      report({
        event: 'message-dropped',
        manifest: guard.subject,
        tool: null,
        reason: 'malformed',
        pointer: '',
        message: `server sent ${(error as Error).message}; ending the session`,
      });
      serverOut.off('data', onServerData);
      shutDownServer('SIGTERM');
      return;
    }
    for (const line of lines) {
      if (refused) return;
      const message = parseLine(line);
      if (message === undefined) continue;
      if (message instanceof Error) {
        report({
          event: 'message-dropped',
          manifest: guard.subject,
          tool: null,
          reason: 'malformed',
          pointer: '',
          message: 'the server wrote a line to stdout that is not JSON; dropped',
        });
        continue;
      }
      apply(guard.fromServer(message), line, output, serverIn, serverOut);
    }
  };

  const onClientEnd = (): void => {
    stopReadingClient();
    endedBy ??= 'client-close';
    shutDownServer();
  };

  serverIn.on('error', () => {
    // EPIPE after the server exited: its exit ends the session.
  });
  output.on('error', onClientEnd);
  serverOut.on('data', onServerData);
  serverErr.on('data', (chunk: Buffer) => {
    errorOutput.write(chunk);
    stderrMidLine = chunk.at(-1) !== 0x0a;
  });

  let spawned = false;
  child.once('spawn', () => {
    spawned = true;
    input.on('data', onClientData);
    input.once('end', onClientEnd);
    input.once('error', onClientEnd);
    input.resume();
  });
  child.once('error', (error) => {
    if (!spawned) {
      for (const timer of timers) clearTimeout(timer);
      rejectDone(
        new Error(`could not start the MCP server ${JSON.stringify(options.command)}: ${error.message}`, {
          cause: error,
        }),
      );
    }
  });
  child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
    if (!spawned) return;
    for (const timer of timers) clearTimeout(timer);
    stopReadingClient();
    const signalNumber =
      signal === null ? undefined : (osConstants.signals as Record<string, number | undefined>)[signal];
    const exitCode = refused ? 1 : (code ?? 128 + (signalNumber ?? 0));
    const outcome: StdioGuardOutcome = {
      exitCode,
      serverExitCode: code,
      serverSignal: signal,
      endedBy: endedBy ?? 'server-exit',
    };
    if (stderrMidLine) errorOutput.write('\n');
    if (output.destroyed || output.writableEnded) resolveDone(outcome);
    else output.write('', () => resolveDone(outcome));
  });

  return {
    get pid() {
      return child.pid;
    },
    done,
    stop(signal: NodeJS.Signals = 'SIGTERM') {
      endedBy ??= 'signal';
      stopReadingClient();
      shutDownServer(signal);
    },
  };
}

// ── SDK transport wrapper ───────────────────────────────────────────────────

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

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
