// `toolseal approvals list|show|approve|deny` (issue 13 §3 "CLI for operators", docs/approvals.md): an operator reads
// what a host asks to run and decides it. `show` recomputes the digest from the envelope and the signed tool it was
// given (it trusts no digest it did not compute) and prints vendor and host text escaped for a terminal.

import { parseArgs } from 'node:util';
import { APPROVAL_ID_PATTERN, ApprovalsClient } from '../client/approvals.ts';
import { isSha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';
import { computeActionFromRequest, computeToolDigest, readActionRequest } from '../host/index.ts';
import type { ManifestTool } from '../pipeline/index.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
import {
  APPROVAL_STATUSES,
  type ApprovalListResponse,
  type ApprovalResponse,
  type ApprovalStatus,
  type ApprovalTransitionResponse,
} from '../protocol/wire.ts';
import { describeAmount, revealHiddenCharacters as escapeForTerminal } from '../web/approval-words.ts';
import { describeAnnotations, describeCapabilities, describeNoClaim } from '../web/capability-words.ts';
import { resolveRegistryUrl, resolveToken } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';

export const approvalsUsage = `toolseal approvals list [--status S] [--json] --registry URL --token T
toolseal approvals show ID [--json] --registry URL --token T
toolseal approvals approve ID --digest D [--reason R] [--json] --registry URL --token T
toolseal approvals deny ID [--digest D] [--reason R] [--json] --registry URL --token T
  An operator's view of the approval requests hosts' guards make for tool calls that need one.
  list: the requests, newest first (S: pending, approved, denied, consumed or expired).
  show: one request: the signed tool (name, title, description, what it may touch), the amount with its
    currency, the material arguments (what the digest binds), the audience (the host), status, expiry and the
    digest, which show recomputes from what the registry sent (DIGEST_MISMATCH when it differs). Text from
    vendors and hosts is printed with control, bidi and invisible characters written as \\u{...}.
  approve: approves ID; --digest is required and must be the digest you were shown (another one is
    APPROVAL_DIGEST_MISMATCH: you would be approving something else).
  deny: denies ID (without --digest the request's current digest is fetched first).
  --reason: plain text recorded with the decision (never in the log). --json prints the registry's answer as
  one JSON object instead of text. TOOLSEAL_REGISTRY and TOOLSEAL_OPERATOR_TOKEN may stand for the flags.
  Refusals are one JSON line on stderr (exit 1); usage errors exit 2.`;

const COMMON_OPTIONS = {
  registry: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
} as const;

type Subcommand = (args: string[]) => Promise<ExitCode>;

const subcommands: Record<string, Subcommand> = {
  list: runList,
  show: runShow,
  approve: (args) => runDecision('approve', args),
  deny: (args) => runDecision('deny', args),
};

export async function runApprovalsCommand(args: string[]): Promise<ExitCode> {
  const [name, ...rest] = args;
  const run = name === undefined || !Object.hasOwn(subcommands, name) ? undefined : subcommands[name];
  if (run === undefined) {
    const given = name === undefined || name.startsWith('-') ? 'no subcommand' : `unknown subcommand ${name}`;
    throw new UsageError(`${given}: approvals needs list, show, approve or deny`);
  }
  return run(rest);
}

function clientOf(values: { registry?: string | undefined; token?: string | undefined }): ApprovalsClient {
  const registry = resolveRegistryUrl(values.registry);
  return new ApprovalsClient({ registry, token: resolveToken(values.token, 'TOOLSEAL_OPERATOR_TOKEN') });
}

function readId(positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError(`expected one approval ID, got ${positionals.length}`);
  const id = positionals[0]!;
  if (!APPROVAL_ID_PATTERN.test(id)) throw new UsageError(`${JSON.stringify(id)} is not an approval ID (apr_…)`);
  return id;
}

async function runList(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...COMMON_OPTIONS, status: { type: 'string' } },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError('approvals list takes no arguments');
  const status = values.status;
  if (status !== undefined && !(APPROVAL_STATUSES as readonly string[]).includes(status)) {
    throw new UsageError(`--status must be one of ${APPROVAL_STATUSES.join(', ')}`);
  }
  const answer = await clientOf(values).list(status as ApprovalStatus | undefined);
  await writeStdout(values.json ? `${JSON.stringify(answer)}\n` : formatList(answer, status));
  return 0;
}

async function runShow(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({ args, options: COMMON_OPTIONS, allowPositionals: true });
  const id = readId(positionals);
  const approval = await clientOf(values).get(id);
  const material = recomputeMaterial(approval);
  await writeStdout(values.json ? `${JSON.stringify(approval)}\n` : formatApproval(approval, material));
  return 0;
}

async function runDecision(decision: 'approve' | 'deny', args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...COMMON_OPTIONS, digest: { type: 'string' }, reason: { type: 'string' } },
    allowPositionals: true,
  });
  const id = readId(positionals);
  if (decision === 'approve' && values.digest === undefined) {
    throw new UsageError('approve needs --digest D, the digest you were shown (toolseal approvals show ID)');
  }
  if (values.digest !== undefined && !isSha256Digest(values.digest)) {
    throw new UsageError('--digest must be sha256: and 64 lowercase hex digits');
  }
  const client = clientOf(values);
  const digest = values.digest ?? (await client.get(id)).digest; // denying another digest is harmless
  const answer = await client.decide(id, {
    decision,
    digest,
    ...(values.reason === undefined ? {} : { reason: values.reason }),
  });
  await writeStdout(values.json ? `${JSON.stringify(answer)}\n` : formatTransition(answer));
  return 0;
}

// ── recomputation ─────────────────────────────────────────────────────────

/**
 * The material view of the request, computed here from its envelope and the signed tool the registry sent; the
 * registry's digest must be the one they give (else DIGEST_MISMATCH: what is shown is not what would be approved).
 */
function recomputeMaterial(approval: ApprovalResponse): JsonValue {
  const { envelope, tool } = approval;
  const text = (key: string): string => (typeof envelope[key] === 'string' ? envelope[key] : '');
  const signed = {
    registry: text('registry'),
    manifest: text('manifest'),
    manifestDigest: text('manifestDigest') as `sha256:${string}`,
    tool: tool as unknown as ManifestTool,
    toolDigest: computeToolDigest(tool),
  };
  let digest: string;
  let material: JsonValue;
  try {
    const action = computeActionFromRequest(signed, readActionRequest(canonicalizeToBytes(envelope)));
    digest = action.digest;
    material = action.envelope.arguments;
  } catch (cause) {
    throw new ToolsealError('DIGEST_MISMATCH', `approval ${approval.id}: the envelope does not bind the tool shown`, {
      cause,
    });
  }
  if (digest !== approval.digest) {
    throw new ToolsealError(
      'DIGEST_MISMATCH',
      `approval ${approval.id}: the registry says ${approval.digest} but what it sent binds ${digest}; do not approve`,
    );
  }
  return material;
}

// ── text output ───────────────────────────────────────────────────────────

/** Multi-line text, each line escaped and indented (so no line of it can pass for one of ours). */
function indentBlock(text: string, indent = '    '): string {
  return text
    .split('\n')
    .map((line) => `${indent}${escapeForTerminal(line)}`)
    .join('\n');
}

function row(label: string, value: string): string {
  return `${label.padEnd(12)}${value}\n`;
}

function formatList(answer: ApprovalListResponse, status: string | undefined): string {
  if (answer.items.length === 0) return `no ${status === undefined ? '' : `${status} `}approval requests\n`;
  const header = `${'ID'.padEnd(28)}${'STATUS'.padEnd(10)}${'EXPIRES'.padEnd(26)}DIGEST\n`;
  return (
    header +
    answer.items
      .map((item) => {
        const decided = item.decidedBy === undefined ? '' : `  by ${escapeForTerminal(item.decidedBy)}`;
        return `${item.id.padEnd(28)}${item.status.padEnd(10)}${escapeForTerminal(item.expiresAt).padEnd(26)}${item.digest}${decided}\n`;
      })
      .join('')
  );
}

function formatApproval(approval: ApprovalResponse, material: JsonValue): string {
  const tool = approval.tool as unknown as ManifestTool;
  const envelope = approval.envelope;
  const quote = (value: JsonValue | undefined): string => escapeForTerminal(typeof value === 'string' ? value : '');
  const title = typeof tool.title === 'string' ? ` — ${escapeForTerminal(tool.title)}` : '';
  let out = row('approval', approval.id);
  out += row(
    'status',
    `${approval.status} (created ${quote(approval.createdAt)}, expires ${quote(approval.expiresAt)})`,
  );
  out += row('tool', `${quote(tool.name)}${title}`);
  out += row('manifest', `${quote(envelope['manifest'])} (${quote(envelope['manifestDigest'])})`);
  out += row('registry', quote(envelope['registry']));
  out += row('audience', `${quote(envelope['audience'])} (the host that asks)`);
  const amount = describeAmount(tool, material);
  if (amount !== undefined) out += row('amount', escapeForTerminal(amount));
  if (typeof tool.description === 'string') out += `description\n${indentBlock(tool.description)}\n`;
  out += `may touch (the publisher's signed declaration)\n${indentBlock(describeTouches(tool).join('\n'))}\n`;
  const hints = describeAnnotations(isJsonObject(tool.annotations) ? tool.annotations : undefined);
  if (hints.length > 0) out += `hints (not guarantees)\n${indentBlock(hints.join('\n'))}\n`;
  out += `arguments (material: what the digest binds)\n${indentBlock(JSON.stringify(material, null, 2))}\n`;
  out += formatDecided(approval);
  out += row('digest', approval.digest);
  if (approval.status === 'pending') {
    out += `\nto approve: toolseal approvals approve ${approval.id} --digest ${approval.digest}\n`;
    out += `to deny:    toolseal approvals deny ${approval.id}\n`;
  }
  return out;
}

function formatDecided(approval: ApprovalResponse): string {
  let out = '';
  if (approval.decidedBy !== undefined) {
    const at = approval.decidedAt === undefined ? '' : ` at ${escapeForTerminal(approval.decidedAt)}`;
    out += row('decided', `by ${escapeForTerminal(approval.decidedBy)}${at}`);
  }
  if (approval.reason !== undefined) out += row('reason', escapeForTerminal(approval.reason));
  if (approval.consumedAt !== undefined) out += row('consumed', escapeForTerminal(approval.consumedAt));
  return out;
}

/** What the tool may touch, in words (an absent area is no claim: unknown, not none). */
function describeTouches(tool: ManifestTool): string[] {
  if (!isJsonObject(tool.capabilities)) return ['declares no capabilities: what it touches is unknown, not none'];
  try {
    return describeCapabilities(tool.capabilities).flatMap((area) =>
      area.claim === 'no-claim' ? [describeNoClaim(area.area)] : area.phrases.map((phrase) => `${phrase}`),
    );
  } catch {
    return [`(unreadable declaration) ${JSON.stringify(tool.capabilities)}`];
  }
}

function formatTransition(answer: ApprovalTransitionResponse): string {
  return `${answer.status} ${answer.id} (${answer.digest}); recorded in the log at index ${answer.logIndex}\n`;
}
