// The action digest (issue §2): what an operator approves is one exact call of one signed tool, for one host.
//   envelope     = {type: "toolseal.action/v1", registry, manifest: "name@version", manifestDigest, tool, toolDigest,
//                   arguments: <material view>, audience}   (a closed type, hashed whole)
//   toolDigest   = "sha256:" + hex(SHA-256(JCS(the signed tool object, as it stands in the signed manifest bytes)))
//   actionDigest = "sha256:" + hex(SHA-256("toolseal/v1/action:" || JCS(envelope)))
// The domain prefix keeps an action digest from ever equalling a manifest or attestation digest. Pure: no I/O.

import { ToolsealError } from '../core/errors.ts';
import { computeDigest, type Sha256Digest } from '../core/digest.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
import type { ManifestTool } from '../pipeline/envelope.ts';
import { SIGNED_MANIFEST_PARSE_LIMITS } from '../pipeline/limits.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { checkArguments } from './argument-schema.ts';
import { readToolCall, type CallArguments } from './arguments.ts';
import { buildMaterialView } from './material-view.ts';
import { checkMoney } from './money.ts';

export const ACTION_TYPE = 'toolseal.action/v1';
export const ACTION_DIGEST_DOMAIN = 'toolseal/v1/action:';

/** One tool of a verified signed manifest, with the digests an action binds (both recomputed from the bytes). */
export interface SignedTool {
  /** The registry's origin, as it records it in its attestations. */
  registry: string;
  /** `name@version` of the signed manifest. */
  manifest: string;
  manifestDigest: Sha256Digest;
  /** The signed tool object. */
  tool: ManifestTool;
  toolDigest: Sha256Digest;
}

/** The closed action envelope. */
export interface ActionEnvelope {
  type: typeof ACTION_TYPE;
  registry: string;
  manifest: string;
  manifestDigest: Sha256Digest;
  tool: string;
  toolDigest: Sha256Digest;
  arguments: JsonValue;
  audience: string;
}

/** One call, checked and bound. */
export interface Action {
  digest: Sha256Digest;
  /** The envelope that was hashed (`arguments` is the material view). */
  envelope: ActionEnvelope;
  /** What travels to the registry: the same envelope with `arguments` as the call sent them. */
  request: ActionEnvelope;
}

/** Selected tools by (digest of the manifest bytes, registry, tool name); bounded, the least recently used goes first. */
const selectedTools = new Map<string, SignedTool>();
const MAX_SELECTED_TOOLS = 256;

/**
 * The tool `toolName` of signed manifest bytes the caller has verified (verifyFetched, or a lockfile digest).
 * Refuses with NOT_FOUND when the manifest has no such tool (names are compared exactly: the signed name is NFC).
 * The bytes are hashed on every call; the strict parse and the tool digest are remembered by that digest (the same
 * digest is the same bytes), so a registry or a host selecting from the same manifest again parses it once. The
 * result is shared and frozen.
 */
export function selectSignedTool(signedManifestBytes: Uint8Array, toolName: string, registry: string): SignedTool {
  const manifestDigest = computeDigest(signedManifestBytes);
  const key = JSON.stringify([manifestDigest, registry, toolName]);
  let signed = selectedTools.get(key);
  if (signed !== undefined) {
    selectedTools.delete(key);
  } else {
    signed = deepFreeze(parseSignedTool(signedManifestBytes, manifestDigest, toolName, registry));
    if (selectedTools.size >= MAX_SELECTED_TOOLS) selectedTools.delete(selectedTools.keys().next().value as string);
  }
  selectedTools.set(key, signed);
  return signed;
}

function parseSignedTool(
  signedManifestBytes: Uint8Array,
  manifestDigest: Sha256Digest,
  toolName: string,
  registry: string,
): SignedTool {
  const manifest = parseStrict(signedManifestBytes, SIGNED_MANIFEST_PARSE_LIMITS).value;
  const tools = isJsonObject(manifest) ? manifest['tools'] : undefined;
  if (!isJsonObject(manifest) || !Array.isArray(tools)) {
    throw new ToolsealError('INVALID_MANIFEST', 'the signed bytes are not a manifest', { pointer: '' });
  }
  const tool = tools.find((candidate) => isJsonObject(candidate) && candidate['name'] === toolName);
  const name = `${String(manifest['name'])}@${String(manifest['version'])}`;
  if (!isJsonObject(tool)) {
    throw new ToolsealError('NOT_FOUND', `the signed manifest ${name} has no tool ${JSON.stringify(toolName)}`);
  }
  return {
    registry,
    manifest: name,
    manifestDigest,
    tool: tool as unknown as ManifestTool,
    toolDigest: computeToolDigest(tool),
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

/** `"sha256:" + hex(SHA-256(JCS(tool)))` of a signed tool object. */
export function computeToolDigest(tool: JsonObject): Sha256Digest {
  return computeDigest(canonicalizeToBytes(tool));
}

/**
 * Check a call's arguments (the signed inputSchema, then the money rules; ARGUMENTS_INVALID, MONEY_INVALID,
 * MONEY_CEILING_EXCEEDED) and bind it: the action digest over the material view, for `audience`.
 */
export function computeAction(signed: SignedTool, args: CallArguments, audience: string): Action {
  checkActionParties(signed, audience);
  checkCallArguments(signed, args);
  return bindCheckedAction(signed, args, audience);
}

/** A call's arguments against the signed tool: its inputSchema, then its money rules (the checks of computeAction). */
export function checkCallArguments(signed: SignedTool, args: CallArguments): void {
  checkArguments(signed.tool.inputSchema, args.value, signed.toolDigest);
  checkMoney(signed.tool.capabilities?.money, args);
}

/**
 * {@link computeAction} for arguments that have just passed {@link checkCallArguments} against the same signed tool
 * (guard checks every call, and binds only those that need approval: the checks run once).
 */
export function bindCheckedAction(signed: SignedTool, args: CallArguments, audience: string): Action {
  checkActionParties(signed, audience);
  const request: ActionEnvelope = {
    type: ACTION_TYPE,
    registry: signed.registry,
    manifest: signed.manifest,
    manifestDigest: signed.manifestDigest,
    tool: signed.tool.name,
    toolDigest: signed.toolDigest,
    arguments: args.value,
    audience,
  };
  const envelope: ActionEnvelope = { ...request, arguments: buildMaterialView(args.value, signed.tool.approval) };
  return { digest: hashActionEnvelope(envelope), envelope, request };
}

function checkActionParties(signed: SignedTool, audience: string): void {
  if (audience === '' || signed.registry === '') {
    throw new ToolsealError('BAD_REQUEST', 'an action needs a registry origin and an audience');
  }
}

/**
 * {@link computeAction} from the exact bytes of a JSON-RPC `tools/call` request: the arguments are read strictly
 * from them, and the call must name the signed tool (else NOT_FOUND).
 */
export function computeActionForCall(signed: SignedTool, messageBytes: Uint8Array, audience: string): Action {
  const call = readToolCall(messageBytes);
  if (call.name !== signed.tool.name) {
    throw new ToolsealError(
      'NOT_FOUND',
      `the call is for tool ${JSON.stringify(call.name)}, not ${JSON.stringify(signed.tool.name)}`,
      { pointer: '/params/name' },
    );
  }
  return computeAction(signed, call.arguments, audience);
}

const domainBytes = new TextEncoder().encode(ACTION_DIGEST_DOMAIN);

function hashActionEnvelope(envelope: ActionEnvelope): Sha256Digest {
  const body = canonicalizeToBytes(envelope as unknown as JsonObject);
  const bytes = new Uint8Array(domainBytes.length + body.length);
  bytes.set(domainBytes, 0);
  bytes.set(body, domainBytes.length);
  return computeDigest(bytes);
}
