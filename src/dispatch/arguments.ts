// A tool call's arguments as sent (issue §2): read with the strict publish parser (duplicate keys, lone surrogates,
// unsafe integers and bad UTF-8 refused, src/pipeline/parse.ts) from the exact JSON-RPC bytes of a `tools/call`.

import { hasLoneSurrogate } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json.ts';
import { defaultParseLimits, parseStrict } from '../pipeline/parse.ts';
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
  return readCallMessage(parseStrict(messageBytes).value, () => utf8Decoder.decode(messageBytes));
}

/**
 * {@link readToolCall} of the UTF-8 bytes of `text`, for a message the caller has already read from exactly `text`
 * with the strict parser (parseStrict or parseStrictText, whatever its depth limit): the same answer and the same
 * refusals, without parsing it again. Why it is the same: readToolCall's parse of those bytes decodes them back to
 * `text` (UTF-8 is one to one for text without lone surrogates) and runs the same parser over it, which reads the
 * same value; it could only differ by the limits of its own (a body over 1 MiB, nesting deeper than 64) or a BOM
 * (which it refuses). A text with a lone surrogate, a leading U+FEFF, over the size limit or nesting beyond the depth
 * limit is therefore read from its bytes, as before; everything else is read from `message`.
 */
export function readParsedToolCall(message: JsonValue, text: string): ToolCall {
  if (
    text.charCodeAt(0) === 0xfeff ||
    hasLoneSurrogate(text) ||
    Buffer.byteLength(text, 'utf8') > defaultParseLimits.maxBytes ||
    !isWithinDepth(message, defaultParseLimits.maxDepth)
  )
    return readToolCall(new TextEncoder().encode(text));
  return readCallMessage(message, () => text);
}

/** The checks of a tools/call once its message is read; `readText` gives the message's text (for the arguments'). */
function readCallMessage(message: JsonValue, readText: () => string): ToolCall {
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
  const text = findValueText(readText(), ['params', 'arguments']);
  return { id: callId, name: params['name'], arguments: { value: args, text }, params };
}

/** No array or object of `value` nests deeper than `maxDepth`, counted as the strict parser does (the root is 1). */
function isWithinDepth(value: JsonValue, maxDepth: number): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (maxDepth < 1) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!isWithinDepth(item, maxDepth - 1)) return false;
    return true;
  }
  for (const key of Object.keys(value)) if (!isWithinDepth(value[key]!, maxDepth - 1)) return false;
  return true;
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
