// A tool call's arguments as sent (issue §2): read with the strict publish parser (duplicate keys, lone surrogates,
// unsafe integers and bad UTF-8 refused, src/pipeline/parse.ts) from the exact JSON-RPC bytes of a `tools/call`.

import { ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonObject } from '../core/json.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { findValueText } from './raw-json.ts';

/** A call's arguments, strictly parsed, with the text they were read from (to read literals as sent). */
export interface CallArguments {
  value: JsonObject;
  /**
   * The JSON text of `arguments` exactly as sent; undefined for arguments handed over already parsed (then an
   * amount can only be checked as a value: `100.0` cannot be told from `100`).
   */
  text: string | undefined;
}

/** A `tools/call` request read from its bytes. */
export interface ToolCall {
  /** The JSON-RPC id (a string, a number, or null). */
  id: string | number | null;
  /** `params.name`: the tool called. */
  name: string;
  arguments: CallArguments;
  /** The request's `params` as read (their `_meta` names an approval to consume, issue 13 §4). */
  params: JsonObject;
}

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Read a JSON-RPC `tools/call` request from the exact bytes received. Absent `params.arguments` is `{}` (MCP makes
 * them optional). Refuses with the strict parser's codes (pointers into the message) or ARGUMENTS_INVALID.
 */
export function readToolCall(messageBytes: Uint8Array): ToolCall {
  const message = parseStrict(messageBytes).value;
  if (!isJsonObject(message) || message['method'] !== 'tools/call') {
    throw new ToolsealError('ARGUMENTS_INVALID', 'the message is not a JSON-RPC tools/call request', {
      pointer: '/method',
    });
  }
  const params = message['params'];
  if (!isJsonObject(params) || typeof params['name'] !== 'string') {
    throw new ToolsealError('ARGUMENTS_INVALID', 'a tools/call request needs params with a string name', {
      pointer: '/params/name',
    });
  }
  const id = message['id'];
  const callId = typeof id === 'string' || typeof id === 'number' ? id : null;
  const args = params['arguments'];
  if (args === undefined) return { id: callId, name: params['name'], arguments: { value: {}, text: '{}' }, params };
  if (!isJsonObject(args)) {
    throw new ToolsealError('ARGUMENTS_INVALID', 'params.arguments must be a JSON object', {
      pointer: '/params/arguments',
    });
  }
  const text = findValueText(utf8Decoder.decode(messageBytes), ['params', 'arguments']);
  return { id: callId, name: params['name'], arguments: { value: args, text }, params };
}

/** Read a call's arguments from their own JSON bytes (a JSON object), as strictly as {@link readToolCall}. */
export function readCallArguments(argumentBytes: Uint8Array): CallArguments {
  const value = parseStrict(argumentBytes).value;
  if (!isJsonObject(value)) {
    throw new ToolsealError('ARGUMENTS_INVALID', 'tool call arguments must be a JSON object', { pointer: '' });
  }
  return { value, text: utf8Decoder.decode(argumentBytes) };
}

/**
 * Arguments the caller has already parsed with the strict parser (parseStrict): no text, so a money amount is
 * checked as a value only. Prefer {@link readToolCall} or {@link readCallArguments} when the bytes are at hand.
 */
export function fromParsedArguments(value: JsonObject): CallArguments {
  return { value, text: undefined };
}
