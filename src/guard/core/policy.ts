// The guard's approval policy (issue 13 §4; schema/guard-policy-v1.schema.json; docs/approvals.md "Guard and policy"):
// the operator's file saying which tools/call requests need an operator's approval. Read strictly (the publish
// parser: duplicate keys refused), checked as a closed type, and matched purely against the signed tool and the
// call's checked arguments.

import { ToolsealError } from '../../core/errors.ts';
import { escapePointerToken } from '../../core/json-pointer.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../../core/json.ts';
import { readArgumentValue } from '../../dispatch/money.ts';
import type { ManifestTool, ToolAnnotations } from '../../pipeline/envelope.ts';
import { parseStrict } from '../../pipeline/parse.ts';

export const GUARD_POLICY_VERSION = 1;
/** At most this many rules (schema: maxItems). */
export const MAX_POLICY_RULES = 256;

export type AnnotationHint = 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint';
export type CapabilityKind = 'network' | 'filesystem.write' | 'secrets';

export type PolicyRule =
  | { tool: string }
  | { annotation: AnnotationHint }
  | { money: { atLeastMinor: number } }
  | { capability: CapabilityKind }
  | { all: true };

export interface GuardPolicy {
  version: typeof GUARD_POLICY_VERSION;
  requireApproval: PolicyRule[];
}

const ANNOTATION_HINTS: readonly AnnotationHint[] = [
  'readOnlyHint',
  'destructiveHint',
  'idempotentHint',
  'openWorldHint',
];
const CAPABILITY_KINDS: readonly CapabilityKind[] = ['network', 'filesystem.write', 'secrets'];
const RULE_KINDS = ['tool', 'annotation', 'money', 'capability', 'all'] as const;

/**
 * Read a policy file's exact bytes: the strict parser's codes (DUPLICATE_KEY, INVALID_JSON, ...), then the closed
 * type of schema/guard-policy-v1.schema.json: UNKNOWN_FIELD for a member outside it, BAD_REQUEST for anything else,
 * each with the pointer (into the file) of the first problem.
 */
export function readGuardPolicy(bytes: Uint8Array): GuardPolicy {
  const value = parseStrict(bytes).value;
  const root = expectObject(value, '', 'a guard policy is a JSON object');
  checkMembers(root, '', ['version', 'requireApproval']);
  if (root['version'] !== GUARD_POLICY_VERSION) refuse('/version', 'version must be 1');
  const rules = root['requireApproval'];
  if (!Array.isArray(rules)) refuse('/requireApproval', 'requireApproval must be an array of rules');
  if (rules.length > MAX_POLICY_RULES) refuse('/requireApproval', `at most ${MAX_POLICY_RULES} rules`);
  return {
    version: GUARD_POLICY_VERSION,
    requireApproval: rules.map((rule, index) => readRule(rule, `/requireApproval/${index}`)),
  };
}

function readRule(value: JsonValue, at: string): PolicyRule {
  const rule = expectObject(value, at, 'a rule is a JSON object with exactly one member');
  const keys = Object.keys(rule);
  const unknown = keys.find((key) => !(RULE_KINDS as readonly string[]).includes(key));
  if (unknown !== undefined)
    throw new ToolsealError('UNKNOWN_FIELD', `unknown rule ${JSON.stringify(unknown)}`, {
      pointer: `${at}/${escapePointerToken(unknown)}`,
    });
  if (keys.length !== 1) refuse(at, `a rule has exactly one of ${RULE_KINDS.join(', ')} (this one has ${keys.length})`);
  const kind = keys[0] as (typeof RULE_KINDS)[number];
  const member = rule[kind]!;
  const pointer = `${at}/${kind}`;
  switch (kind) {
    case 'tool':
      if (typeof member !== 'string' || member.length === 0 || member.length > 128)
        refuse(pointer, 'tool is a tool name (a string of 1 to 128 characters)');
      return { tool: member };
    case 'annotation':
      if (!ANNOTATION_HINTS.includes(member as AnnotationHint))
        refuse(pointer, `annotation is one of ${ANNOTATION_HINTS.join(', ')}`);
      return { annotation: member as AnnotationHint };
    case 'capability':
      if (!CAPABILITY_KINDS.includes(member as CapabilityKind))
        refuse(pointer, `capability is one of ${CAPABILITY_KINDS.join(', ')}`);
      return { capability: member as CapabilityKind };
    case 'all':
      if (member !== true) refuse(pointer, 'all must be true');
      return { all: true };
    case 'money':
      return { money: { atLeastMinor: readAtLeastMinor(member, pointer) } };
  }
}

function readAtLeastMinor(value: JsonValue, at: string): number {
  const money = expectObject(value, at, 'money is {"atLeastMinor": N}');
  checkMembers(money, at, ['atLeastMinor']);
  const threshold = money['atLeastMinor'];
  if (!Number.isSafeInteger(threshold) || (threshold as number) < 0)
    refuse(`${at}/atLeastMinor`, 'atLeastMinor is an integer of minor units, 0 to 2^53-1');
  return threshold as number;
}

function expectObject(value: JsonValue, at: string, what: string): JsonObject {
  if (!isJsonObject(value)) refuse(at, what);
  return value;
}

/** Closed object: UNKNOWN_FIELD for another member, BAD_REQUEST for a missing one. */
function checkMembers(object: JsonObject, at: string, required: readonly string[]): void {
  for (const key of Object.keys(object)) {
    if (!required.includes(key))
      throw new ToolsealError('UNKNOWN_FIELD', `unknown member ${JSON.stringify(key)}`, {
        pointer: `${at}/${escapePointerToken(key)}`,
      });
  }
  for (const key of required) if (!Object.hasOwn(object, key)) refuse(`${at}/${key}`, `${key} is required`);
}

function refuse(pointer: string, message: string): never {
  throw new ToolsealError('BAD_REQUEST', `guard policy: ${message}`, { pointer });
}

/**
 * The rules of `policy` that a call of `tool` (the SIGNED tool object) with `args` (arguments that passed
 * checkArguments and checkMoney) matches, in policy order. Empty: the call needs no approval. Pure.
 */
export function matchPolicy(policy: GuardPolicy, tool: ManifestTool, args: JsonObject): PolicyRule[] {
  return policy.requireApproval.filter((rule) => matchesRule(rule, tool, args));
}

function matchesRule(rule: PolicyRule, tool: ManifestTool, args: JsonObject): boolean {
  if ('all' in rule) return true;
  if ('tool' in rule) return tool.name === rule.tool;
  if ('annotation' in rule) return readHint(tool.annotations, rule.annotation);
  if ('capability' in rule) return mayUseCapability(tool, rule.capability);
  const money = tool.capabilities?.money;
  if (money === undefined) return false;
  const pointer = money.amountArgument;
  // A money tool that does not say which argument is the amount: guard cannot measure the call (fail closed).
  if (pointer === undefined) return true;
  const amount = readArgumentValue(args, pointer);
  // checkMoney has refused any other amount; a missing or odd one still needs approval (fail closed).
  return typeof amount !== 'number' || amount >= rule.money.atLeastMinor;
}

/**
 * The tools a money rule of `policy` gates without being able to measure them: they declare money capabilities but
 * no `money.amountArgument`, so every call of theirs needs approval. Empty without a money rule.
 */
export function findUnmeasuredMoneyTools(policy: GuardPolicy, tools: readonly ManifestTool[]): string[] {
  if (!policy.requireApproval.some((rule) => 'money' in rule)) return [];
  return tools
    .filter((tool) => tool.capabilities?.money !== undefined && tool.capabilities.money.amountArgument === undefined)
    .map((tool) => tool.name);
}

/**
 * An MCP ToolAnnotations hint, with MCP's default when absent (2025-06-18 "Tools": destructiveHint and openWorldHint
 * default to true, readOnlyHint and idempotentHint to false; destructiveHint means nothing for a read-only tool).
 */
export function readHint(annotations: ToolAnnotations | undefined, hint: AnnotationHint): boolean {
  const declared = annotations?.[hint];
  if (declared !== undefined) return declared === true;
  if (hint === 'destructiveHint') return annotations?.readOnlyHint !== true;
  return hint === 'openWorldHint';
}

/** Declared non-empty, or no claim at all (unknown counts as possible); only an explicit empty list is "none". */
function mayUseCapability(tool: ManifestTool, kind: CapabilityKind): boolean {
  const capabilities = tool.capabilities;
  const list =
    kind === 'network'
      ? capabilities?.network?.hosts
      : kind === 'secrets'
        ? capabilities?.secrets?.env
        : capabilities?.filesystem?.write;
  return list === undefined || list.length > 0;
}
