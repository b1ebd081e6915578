// The guard inside a host process (MCP 2025-06-18 "Tools"; TypeScript SDK `Client`): guardClient wraps an SDK Client.
//
// It verifies the manifest first (fetchVerified), then the Client talks to its server through a GuardedTransport
// holding a ToolGuard with `requireListed`: the one message-level policy the stdio proxy enforces, on any SDK
// transport. On top of it the wrapper gives the host typed answers: `listTools()` returns the signed tools, fresh
// objects from the signed bytes; `callTool()` for a withheld, unknown or not-yet-checked tool throws a
// ToolCallRefusedError (DISPATCH_MISMATCH) before anything is sent, and lists the server's tools itself (every page)
// first when no complete tools/list has been checked since the session began or the server's last list_changed.
// Every call's arguments are checked against the signed tool before it is sent (a refusal is returned as the tool
// result the model reads: isError, `_meta["io.toolseal/refusal"]` with the code); with a `policy` and a `hostToken` (issue 13 §4), a call that needs approval is answered with a tool
// result (isError, `_meta["io.toolseal/approval"]`) until an operator approves that exact call. With `upstream` (issue
// 27 §2), the URL the host will connect to must be one of the remotes the manifest signs (SERVER_NOT_SIGNED otherwise).

import { EventEmitter } from 'node:events';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolRequest, CallToolResultSchema, ListToolsRequest, Tool } from '@modelcontextprotocol/sdk/types.js';
import { isErrorCode, ToolsealError } from '../../core/errors.ts';
import { ApprovalsClient } from '../../client/approvals.ts';
import { isJsonObject } from '../../core/json.ts';
import { normaliseRegistryUrl } from '../../client/registry-client.ts';
import { getLockEntry, getRegistryKeyPins, type LockEntry, type Lockfile } from '../../lock/lockfile.ts';
import { parseManifestRef } from '../../protocol/manifest-ref.ts';
import {
  fetchVerified,
  type FetchedManifest,
  type FetchVerifiedOptions,
  type WitnessPolicy,
} from '../../verify/index.ts';
import type { ApprovalEvent, ApprovalsPort, CallGate } from '../core/call-gate.ts';
import { composeGuard } from '../core/compose-guard.ts';
import { assertUpstreamSigned } from '../core/signed-server.ts';
import { GUARD_CALL_REFUSED_CODE, type GuardFinding } from '../core/guard-types.ts';
import { GuardedTransport } from './guarded-transport.ts';
import type { GuardPolicy } from '../core/policy.ts';
import type { ToolGuard } from '../core/tool-guard.ts';

// Type-only imports from the SDK: the wrapper drives the host's own Client and loads no SDK module itself.

export interface GuardClientOptions {
  /** `namespace/name@version` (or `sha256:<hex>`) of the signed manifest the server must present. */
  manifest: string;
  /** The registry's base URL. */
  registry: string;
  /**
   * A lockfile (the manifest must be pinned in it: PIN_MISMATCH otherwise) or its entry: other bytes are refused. A
   * lockfile's registry key pins apply too (as `--locked`): other keys, or another witness policy than the one
   * pinned, are KEY_NOT_PINNED.
   */
  lock?: Lockfile | Pick<LockEntry, 'digest'>;
  /** A C2SP tlog-policy (parseWitnessPolicy): the checkpoint must carry its witness quorum (else WITNESS_QUORUM). */
  witnessPolicy?: WitnessPolicy;
  /** Pinned attestation keys (else the registry's JWKS, trust on first use). */
  jwks?: FetchVerifiedOptions['jwks'];
  /** Pinned log key, the C2SP verifier string (else fetched from the registry, trust on first use). */
  logKey?: string;
  /** Refuse the session on the first tool that differs or is unknown, instead of withholding it. */
  strict?: boolean;
  /** Called for every finding, as the `finding` event is emitted. */
  onFinding?: (finding: GuardFinding) => void;
  /** More options for fetchVerified (timeouts, fetch, signal, yanked policy). */
  verify?: Omit<FetchVerifiedOptions, 'jwks' | 'logKey' | 'lock' | 'expectedDigest' | 'registryKeys'>;
  /** The operator's approval policy (readGuardPolicy); needs `hostToken` (or `approvals`). */
  policy?: GuardPolicy;
  /** A host token of the registry: its host's name is the audience of the approvals guard asks for. */
  hostToken?: string;
  /** The registry's approvals API, instead of an ApprovalsClient built from `registry` and `hostToken`. */
  approvals?: ApprovalsPort;
  /** Called for every approval event (requested, pending, consumed, refused, arguments refused). */
  onEvent?: (event: ApprovalEvent) => void;
  /**
   * The URL of the remote server the host will connect to (issue 27 §2, as `toolseal guard --upstream`): when the
   * manifest signs its server, guardClient throws SERVER_NOT_SIGNED unless it is one of the signed remotes (after URL
   * normalisation; a declared `{variable}` is one host label or path segment), before anything is connected.
   */
  upstream?: string | URL;
}

export interface GuardedClientOptions {
  onFinding?: (finding: GuardFinding) => void;
  /** Argument checks and approvals (guardClient always gives one). */
  gate?: CallGate;
  onEvent?: (event: ApprovalEvent) => void;
}

/** A tools/call the guard refused before sending it: DISPATCH_MISMATCH, with the finding. */
export class ToolCallRefusedError extends ToolsealError {
  readonly finding: GuardFinding;

  constructor(finding: GuardFinding) {
    super('DISPATCH_MISMATCH', finding.message, { pointer: finding.pointer });
    this.finding = finding;
  }
}

type CallToolParams = CallToolRequest['params'];
type CallToolResult = Awaited<ReturnType<Client['callTool']>>;
type ListToolsResult = Awaited<ReturnType<Client['listTools']>>;

/**
 * Verify `options.manifest` (attestation, key, digest, log inclusion, the lock's pin) and wrap `client`, which must
 * not be connected yet: connect it with `guarded.connect(transport)`, so every message goes through the guard.
 */
export async function guardClient(client: Client, options: GuardClientOptions): Promise<GuardedClient> {
  if (client.transport !== undefined)
    throw new ToolsealError(
      'BAD_REQUEST',
      'guardClient needs a Client that is not connected yet; connect it through the guarded client',
    );
  // A policy without a way to ask for approvals is refused before anything is fetched.
  const approvals = options.policy === undefined ? undefined : approvalsFor(options);
  const verified = await fetchVerified(options.registry, options.manifest, {
    ...options.verify,
    ...(options.jwks === undefined ? {} : { jwks: options.jwks }),
    ...(options.logKey === undefined ? {} : { logKey: options.logKey }),
    ...(options.witnessPolicy === undefined ? {} : { witnessPolicy: options.witnessPolicy }),
    ...lockOption(options.manifest, options.registry, options.lock),
  });
  const composed = await composeGuard(verified, {
    strict: options.strict ?? false,
    requireListed: true,
    ...(options.policy === undefined ? {} : { policy: options.policy, approvals }),
  });
  if (options.upstream !== undefined) assertUpstreamSigned(composed.server, String(options.upstream));
  const { guard, gate } = composed.createSession();
  return new GuardedClient(client, guard, { onFinding: options.onFinding, gate, onEvent: options.onEvent }, verified);
}

function approvalsFor(options: GuardClientOptions): ApprovalsPort {
  if (options.approvals !== undefined) return options.approvals;
  if (options.hostToken === undefined || options.hostToken === '')
    throw new ToolsealError('BAD_REQUEST', 'a guard policy needs a host token (hostToken) to ask for approvals');
  const fetchOption = options.verify?.fetch;
  return new ApprovalsClient({
    registry: options.registry,
    token: options.hostToken,
    ...(fetchOption === undefined ? {} : { fetch: fetchOption }),
  });
}

/** fetchVerified's pin from a lockfile (its entry for the reference must exist, its registry's key pins apply). */
function lockOption(
  ref: string,
  registry: string,
  lock: GuardClientOptions['lock'],
): Pick<FetchVerifiedOptions, 'lock' | 'registryKeys'> {
  if (lock === undefined) return {};
  if (!('manifests' in lock)) return { lock };
  const target = parseManifestRef(ref);
  const entry = target.kind === 'version' ? getLockEntry(lock, target.name, target.version) : undefined;
  if (entry === undefined) throw new ToolsealError('PIN_MISMATCH', `${ref} is not pinned in the lockfile`);
  const registryKeys = getRegistryKeyPins(lock, normaliseRegistryUrl(registry));
  return registryKeys === undefined ? { lock: entry } : { lock: entry, registryKeys };
}

/**
 * An SDK Client whose server is checked against one signed manifest. `client` stays usable for everything else (its
 * messages pass the same guard: a tools/call it sends for a refused tool is answered with a JSON-RPC error).
 */
export class GuardedClient extends EventEmitter<{ finding: [GuardFinding] }> {
  /** Settles when a listing the wrapper started itself is done. */
  private listing: Promise<void> | undefined;

  constructor(
    readonly client: Client,
    readonly guard: ToolGuard,
    private readonly options: GuardedClientOptions = {},
    /** What fetchVerified proved, when guardClient built this wrapper. */
    readonly verified?: FetchedManifest,
  ) {
    super();
    if (!guard.requireListed)
      throw new ToolsealError('BAD_REQUEST', 'GuardedClient needs a ToolGuard built with requireListed: true');
  }

  /** Connect the Client to its server through the guard (any SDK transport: stdio, Streamable HTTP, in-memory). */
  async connect(transport: Transport, options?: RequestOptions): Promise<void> {
    const guarded = new GuardedTransport(transport, this.guard, {
      onFinding: (finding) => this.report(finding),
      ...(this.options.gate === undefined ? {} : { gate: this.options.gate }),
      ...(this.options.onEvent === undefined ? {} : { onEvent: this.options.onEvent }),
    });
    await this.client.connect(guarded, options);
  }

  /** One page of tools/list: only signed tools, each a fresh object parsed from the signed bytes. */
  async listTools(params?: ListToolsRequest['params'], options?: RequestOptions): Promise<ListToolsResult> {
    const { tools: presented, ...rest } = await this.client.listTools(params, options);
    const tools = presented.flatMap((tool) => {
      const signed = this.guard.signedTool(tool.name);
      return signed === undefined ? [] : [signed as Tool];
    });
    // The rest of the answer (nextCursor, _meta) copied; the tools are fresh from the signed bytes, never copied.
    return { ...(JSON.parse(JSON.stringify(rest)) as Omit<ListToolsResult, 'tools'>), tools };
  }

  /** Every page of tools/list, as listTools. */
  async listAllTools(options?: RequestOptions): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.listTools(cursor === undefined ? {} : { cursor }, options);
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  }

  /**
   * tools/call, once the tool is checked: lists the server's tools first when no complete list has been checked;
   * a withheld, unknown or unchecked tool throws ToolCallRefusedError and nothing is sent.
   */
  async callTool(
    params: CallToolParams,
    resultSchema?: typeof CallToolResultSchema,
    options?: RequestOptions,
  ): Promise<CallToolResult> {
    if (!this.guard.hasCheckedList) await this.listOnce(options);
    const finding = this.guard.checkCall(typeof params.name === 'string' ? params.name : null);
    if (finding !== undefined) {
      this.report(finding);
      throw new ToolCallRefusedError(finding);
    }
    try {
      return await this.client.callTool(params, resultSchema, options);
    } catch (error) {
      // The server announced list_changed between the check and the send: the transport's guard refused it.
      throw readTransportRefusal(error, this.guard.subject) ?? error;
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /** One listing at a time, shared by the calls waiting for it. */
  private async listOnce(options?: RequestOptions): Promise<void> {
    this.listing ??= this.listAllTools(options).then(
      () => {
        this.listing = undefined;
      },
      (error: unknown) => {
        this.listing = undefined;
        throw error;
      },
    );
    await this.listing;
  }

  private report(finding: GuardFinding): void {
    this.options.onFinding?.(finding);
    this.emit('finding', finding);
  }
}

/**
 * The JSON-RPC error the guard answers a refused tools/call with: a ToolCallRefusedError (DISPATCH_MISMATCH), or a
 * ToolsealError with the gate's code and pointer (ARGUMENTS_INVALID, MONEY_INVALID, APPROVAL_DENIED, FETCH_FAILED...).
 */
function readTransportRefusal(error: unknown, subject: string): ToolsealError | undefined {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== GUARD_CALL_REFUSED_CODE) return undefined;
  const data = (error as { data?: unknown }).data;
  if (!isJsonObject(data) || data['manifest'] !== subject || !isErrorCode(data['code'])) return undefined;
  if (data['code'] !== 'DISPATCH_MISMATCH') {
    const pointer = typeof data['pointer'] === 'string' ? data['pointer'] : undefined;
    const message = error.message.replace(/^MCP error -?\d+: toolseal guard: [A-Z_]+: /, '');
    return new ToolsealError(data['code'], message, pointer === undefined ? undefined : { pointer });
  }
  const reason = data['reason'];
  return new ToolCallRefusedError({
    event: 'call-refused',
    manifest: subject,
    tool: typeof data['tool'] === 'string' ? data['tool'] : null,
    reason: reason === 'unknown-tool' || reason === 'withheld' || reason === 'malformed' ? reason : 'not-checked',
    pointer: '/params/name',
    message: error.message.replace(/^MCP error -?\d+: toolseal guard: /, ''),
  });
}
