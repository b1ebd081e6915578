// The action envelope as it travels (issue §2): the closed envelope of action-digest.ts with `arguments` as the call
// sent them. Whoever receives one (the registry's approval service) reads it strictly from the exact bytes and
// recomputes the material view and the digest itself: no digest or material view from anyone else is trusted.

import { ToolsealError } from '../core/errors.ts';
import { escapePointerToken } from '../core/json-pointer.ts';
import { isJsonObject } from '../core/json.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { ACTION_TYPE, computeAction, type Action, type SignedTool } from './action-digest.ts';
import type { CallArguments } from './arguments.ts';
import { findValueText } from './raw-json.ts';

/** A travelling action envelope, read: every member but `arguments` is a string. */
export interface ActionRequest {
  registry: string;
  manifest: string;
  manifestDigest: string;
  tool: string;
  toolDigest: string;
  audience: string;
  arguments: CallArguments;
}

const STRING_MEMBERS = ['registry', 'manifest', 'manifestDigest', 'tool', 'toolDigest', 'audience'] as const;
const MEMBERS: ReadonlySet<string> = new Set(['type', 'arguments', ...STRING_MEMBERS]);
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Read a travelling envelope from its exact bytes, as strictly as publish (the strict parser's codes), as a closed
 * type: UNKNOWN_FIELD for a member outside it, BAD_REQUEST for a missing or mistyped member (with its pointer).
 */
export function readActionRequest(bytes: Uint8Array): ActionRequest {
  const value = parseStrict(bytes).value;
  if (!isJsonObject(value)) {
    throw new ToolsealError('BAD_REQUEST', 'an action envelope is a JSON object', { pointer: '' });
  }
  for (const key of Object.keys(value)) {
    if (!MEMBERS.has(key)) {
      throw new ToolsealError('UNKNOWN_FIELD', `unknown member ${JSON.stringify(key)} in an action envelope`, {
        pointer: `/${escapePointerToken(key)}`,
      });
    }
  }
  if (value['type'] !== ACTION_TYPE) {
    throw new ToolsealError('BAD_REQUEST', `an action envelope's type is ${JSON.stringify(ACTION_TYPE)}`, {
      pointer: '/type',
    });
  }
  const strings: Record<(typeof STRING_MEMBERS)[number], string> = {
    registry: '',
    manifest: '',
    manifestDigest: '',
    tool: '',
    toolDigest: '',
    audience: '',
  };
  for (const member of STRING_MEMBERS) {
    const field = value[member];
    if (typeof field !== 'string' || field === '') {
      throw new ToolsealError('BAD_REQUEST', `an action envelope needs a non-empty string ${member}`, {
        pointer: `/${member}`,
      });
    }
    strings[member] = field;
  }
  const args = value['arguments'];
  if (!isJsonObject(args)) {
    throw new ToolsealError('BAD_REQUEST', "an action envelope's arguments are a JSON object", {
      pointer: '/arguments',
    });
  }
  return { ...strings, arguments: { value: args, text: findValueText(utf8Decoder.decode(bytes), ['arguments']) } };
}

/**
 * Recompute the action a travelling envelope names, against the signed tool the receiver looked up itself: the
 * envelope's registry, manifest and tool must be the signed ones (BAD_REQUEST), its digests the recomputed ones
 * (DIGEST_MISMATCH); then the arguments are checked and bound as at dispatch.
 */
export function computeActionFromRequest(signed: SignedTool, request: ActionRequest): Action {
  const expected = {
    registry: signed.registry,
    manifest: signed.manifest,
    tool: signed.tool.name,
    manifestDigest: signed.manifestDigest,
    toolDigest: signed.toolDigest,
  };
  for (const [member, want] of Object.entries(expected) as [keyof typeof expected, string][]) {
    if (request[member] === want) continue;
    const code = member.endsWith('Digest') ? 'DIGEST_MISMATCH' : 'BAD_REQUEST';
    throw new ToolsealError(code, `the envelope's ${member} is not the signed tool's (${want})`, {
      pointer: `/${member}`,
    });
  }
  return computeAction(signed, request.arguments, request.audience);
}
