// Re-verify at dispatch: canonicalize(execute_view) must equal canonicalize(signed_view), tool by tool or whole.

import { ToolsealError } from '../core/errors.ts';
import {
  canonicalizeToText,
  computeDigest,
  inlineSchemaRefs,
  parseStrict,
  SIGNED_MANIFEST_PARSE_LIMITS,
  type JsonObject,
  type JsonValue,
  type Sha256Digest,
} from '../pipeline/index.ts';
import { formatPointer } from '../core/json-pointer.ts';
import { compareUtf16, truncateText } from '../core/text.ts';

/** The key hosts may use for their own, unsigned annotations; the pipeline refuses it in any manifest. */
export const DEFAULT_HOST_ANNOTATIONS_KEY = '_host_meta';

export interface Difference {
  /** RFC 6901 pointer of the first difference, in canonical (sorted-key) order. */
  pointer: string;
  /** What the signed view holds there (undefined: nothing). */
  signed: JsonValue | undefined;
  /** What the checked object holds there (undefined: nothing). */
  actual: JsonValue | undefined;
}

/** The first place where two JSON values differ, walking keys in JCS order (RFC 8785 §3.2.3). */
export function findFirstDifference(
  signed: JsonValue | undefined,
  actual: JsonValue | undefined,
  tokens: (string | number)[] = [],
): Difference | undefined {
  if (Object.is(signed, actual)) return undefined;
  const here = (): Difference => ({ pointer: formatPointer(tokens), signed, actual });
  if (typeof signed !== 'object' || typeof actual !== 'object' || signed === null || actual === null) {
    // Numbers compare as JCS does: 100 and 100.0 are one value; -0 and 0 serialise alike.
    if (typeof signed === 'number' && typeof actual === 'number' && signed === actual) return undefined;
    return here();
  }
  if (Array.isArray(signed) !== Array.isArray(actual)) return here();
  if (Array.isArray(signed) && Array.isArray(actual)) {
    const length = Math.max(signed.length, actual.length);
    for (let i = 0; i < length; i++) {
      const difference = findFirstDifference(signed[i], actual[i], [...tokens, i]);
      if (difference) return difference;
    }
    return undefined;
  }
  const left = signed as JsonObject;
  const right = actual as JsonObject;
  const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort(compareUtf16);
  for (const key of keys) {
    const inLeft = Object.hasOwn(left, key);
    const inRight = Object.hasOwn(right, key) && right[key] !== undefined;
    if (inLeft !== inRight)
      return {
        pointer: formatPointer([...tokens, key]),
        signed: inLeft ? left[key] : undefined,
        actual: inRight ? right[key] : undefined,
      };
    const difference = findFirstDifference(left[key], right[key], [...tokens, key]);
    if (difference) return difference;
  }
  return undefined;
}

/** Remove `key` from every object (hosts' unsigned annotations), without touching the input. */
function stripKey(value: unknown, key: string): unknown {
  if (Array.isArray(value)) return value.map((item) => stripKey(item, key));
  if (typeof value !== 'object' || value === null) return value;
  const result: Record<string, unknown> = {};
  for (const member of Object.keys(value)) {
    if (member === key) continue;
    const child = (value as Record<string, unknown>)[member];
    const stripped = stripKey(child, key);
    if (member === '__proto__')
      Object.defineProperty(result, member, { value: stripped, enumerable: true, writable: true, configurable: true });
    else result[member] = stripped;
  }
  return result;
}

function describe(difference: Difference): string {
  const show = (value: JsonValue | undefined): string =>
    value === undefined ? 'nothing' : truncateText(JSON.stringify(value), 120);
  return `at ${difference.pointer || '/'} the signed manifest has ${show(difference.signed)} but the object has ${show(difference.actual)}`;
}

export interface VerifyDispatchOptions {
  /** Where the host keeps its own unsigned annotations (default `_host_meta`); stripped before comparing. */
  hostAnnotationsKey?: string;
  /** When given, the signed bytes must hash to this digest (from a verified attestation or a lockfile). */
  expectedDigest?: Sha256Digest;
}

/**
 * The seed's invariant: the object a router dispatches against must be the signed manifest, byte for
 * byte after JCS, except for the declared host-annotations key. Throws DISPATCH_MISMATCH naming the
 * JSON pointer of the first difference (a missing field, a filled-in default, a re-resolved ref,
 * a normalised string, an injected `_meta` — all are differences).
 */
export function verifyDispatch(
  signedBytes: Uint8Array,
  dispatchObject: unknown,
  options: VerifyDispatchOptions = {},
): void {
  const hostKey = options.hostAnnotationsKey ?? DEFAULT_HOST_ANNOTATIONS_KEY;
  if (options.expectedDigest !== undefined && computeDigest(signedBytes) !== options.expectedDigest) {
    throw new ToolsealError(
      'DIGEST_MISMATCH',
      `signed bytes hash to ${computeDigest(signedBytes)}, not ${options.expectedDigest}`,
    );
  }
  const signedParse = parseStrict(signedBytes, SIGNED_MANIFEST_PARSE_LIMITS);
  const signedView = signedParse.value;
  if (JSON.stringify(signedView).includes(`${JSON.stringify(hostKey)}:`)) {
    throw new ToolsealError(
      'DISPATCH_MISMATCH',
      `the signed manifest itself uses the host annotations key ${JSON.stringify(hostKey)}; choose another key`,
    );
  }
  const executeView = stripKey(dispatchObject, hostKey) as JsonValue;
  let executeText: string;
  try {
    executeText = canonicalizeToText(executeView);
  } catch (cause) {
    throw new ToolsealError(
      'DISPATCH_MISMATCH',
      'the dispatch object is not JSON (a non-finite number, a cycle, or a non-JSON value)',
      { cause },
    );
  }
  if (executeText === Buffer.from(signedBytes).toString('utf8')) return;
  const difference = findFirstDifference(signedView, JSON.parse(executeText) as JsonValue) ?? {
    pointer: '',
    signed: signedView,
    actual: executeView,
  };
  throw new ToolsealError('DISPATCH_MISMATCH', `dispatch object is not the signed manifest: ${describe(difference)}`, {
    pointer: difference.pointer,
  });
}

/**
 * The view of a tool a live MCP server presents that is compared with the signed tool: refs inlined and
 * the name NFC-normalised exactly as the publish pipeline does (so another key order or `$ref`s pass).
 */
export function normalisePresentedTool(tool: unknown, budgetSize = 4 * 1024 * 1024): JsonValue {
  if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) {
    throw new ToolsealError('DISPATCH_MISMATCH', 'the presented tool is not an object');
  }
  const source = JSON.parse(canonicalizeToText(tool as JsonValue)) as JsonObject;
  const result: JsonObject = { ...source };
  if (typeof source['name'] === 'string') result['name'] = source['name'].normalize('NFC');
  const budget = { remaining: budgetSize };
  for (const member of ['inputSchema', 'outputSchema'] as const) {
    if (source[member] !== undefined)
      result[member] = inlineSchemaRefs(source[member], ['tools', 0, member], 3, budget);
  }
  return result;
}

/**
 * The signed tool as a server is expected to present it: `capabilities` and `approval` (the classification of its
 * arguments for approvals) are registry-only, never sent by servers.
 */
export function presentableSignedTool(signedTool: JsonObject): JsonObject {
  const { capabilities: _capabilities, approval: _approval, ...rest } = signedTool;
  return rest;
}

export type ToolCheck =
  | { ok: true; signedTool: JsonObject }
  | { ok: false; reason: 'unknown-tool' | 'differs'; pointer: string; message: string };

/** {@link checkPresentedTool} for one signed manifest, with a fast path for tools presented exactly as signed. */
export type PresentedToolChecker = (presentedTool: unknown) => ToolCheck;

/**
 * Is `presentedTool` (as a server or router presents it) exactly a tool of the signed manifest?
 * Returns the signed tool (from the signed bytes) when it is, or the pointer of the first difference.
 */
export function checkPresentedTool(signedManifest: JsonObject, presentedTool: unknown): ToolCheck {
  const tools = Array.isArray(signedManifest['tools']) ? (signedManifest['tools'] as JsonObject[]) : [];
  let presented: JsonValue;
  try {
    presented = normalisePresentedTool(presentedTool);
  } catch (error) {
    const message = error instanceof ToolsealError ? `${error.code}: ${error.message}` : String(error);
    return {
      ok: false,
      reason: 'differs',
      pointer: error instanceof ToolsealError ? (error.pointer ?? '') : '',
      message,
    };
  }
  const name = (presented as JsonObject)['name'];
  const index = tools.findIndex((tool) => tool['name'] === name);
  if (index < 0)
    return {
      ok: false,
      reason: 'unknown-tool',
      pointer: '/name',
      message: `tool ${JSON.stringify(name)} is not in the signed manifest`,
    };
  const signedTool = tools[index]!;
  const difference = findFirstDifference(presentableSignedTool(signedTool), presented);
  if (!difference) return { ok: true, signedTool };
  return {
    ok: false,
    reason: 'differs',
    pointer: difference.pointer,
    message: `tool ${JSON.stringify(name)} differs from its signed definition: ${describe(difference)}`,
  };
}

/**
 * True only when `canonicalizeToText(value)` gives exactly what `canonicalizeToText(canonical)` gives, without
 * building either text; `canonical` is a finite tree of JSON values (from JSON.parse). Sound, not complete: false
 * may still be equal (a member whose value is undefined, a toJSON method), and callers then do the full work.
 * `value` is data, as parsers produce it (an accessor answering otherwise on each read is beyond this, as it is
 * beyond the full check, which reads a presented tool more than once).
 *
 * It reads `value` as the `canonicalize` library (RFC 8785, src/pipeline/canonical.ts) does: a primitive is its
 * JSON.stringify text, so `===` (which also makes -0 and 0 one value, as their text is) gives equal texts and rules
 * out NaN and the infinities; an object with a toJSON method is refused here (the library serialises its result);
 * an array is its elements in order (a hole or an undefined element reads as undefined, never equal to an element
 * of `canonical`); any other object is its own enumerable keys (Object.keys) sorted, with their values: the same
 * number of keys, each one a key of `canonical`, is the same key set, hence the same sorted order. The recursion
 * follows `canonical` and ends at its leaves; a cycle in `value` along the way would make one node match both a
 * subtree of `canonical` and a strictly smaller subtree of it, which cannot be, so the library's "Circular
 * reference" refusal never applies when this answers true. Strings and keys equal to those of `canonical` hold a
 * lone surrogate (which the library refuses) exactly when `canonical`'s do: both texts are refused alike.
 */
export function isSameCanonicalValue(value: unknown, canonical: JsonValue): boolean {
  if (typeof canonical !== 'object' || canonical === null) return value === canonical;
  if (typeof value !== 'object' || value === null) return false;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(canonical)) {
    if (!Array.isArray(value) || value.length !== canonical.length) return false;
    for (let i = 0; i < canonical.length; i++) if (!isSameCanonicalValue(value[i], canonical[i]!)) return false;
    return true;
  }
  if (Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== Object.keys(canonical).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(canonical, key)) return false;
    if (!isSameCanonicalValue((value as Record<string, unknown>)[key], canonical[key]!)) return false;
  }
  return true;
}

/**
 * checkPresentedTool(signedManifest, ·), with the answer for each signed tool presented exactly as signed worked
 * out once. Why it answers the same for every input: checkPresentedTool refuses a non-object, and otherwise reads
 * the presented tool only through its JCS text (normalisePresentedTool starts from JSON.parse of it), so two objects
 * with one JCS text get one answer. For each signed tool, its presentable view (the JSON value of the text a
 * faithful server sends) is checked in full here, and its answer kept only when it passes: a signed tool the full
 * check would refuse as presented (a `$ref` left in its schema, a name that is not NFC, another tool of the same
 * name matched first, ...) has no fast path and keeps the full check. A presented tool found by its name whose JCS
 * text is that view's ({@link isSameCanonicalValue}) gets the kept answer; every other input gets the full check.
 * The name the server spelt (what the caller shows and records) is the presented tool's own, read by the caller as
 * before; on the fast path it is the signed name itself.
 */
export function createPresentedToolChecker(signedManifest: JsonObject): PresentedToolChecker {
  const tools = Array.isArray(signedManifest['tools']) ? (signedManifest['tools'] as JsonValue[]) : [];
  const passing = new Map<string, { view: JsonValue; signedTool: JsonObject }>();
  for (const tool of tools) {
    if (typeof tool !== 'object' || tool === null || Array.isArray(tool) || typeof tool['name'] !== 'string') continue;
    let view: JsonValue;
    try {
      view = JSON.parse(canonicalizeToText(presentableSignedTool(tool))) as JsonValue;
    } catch {
      continue;
    }
    const check = checkPresentedTool(signedManifest, view);
    if (check.ok && !passing.has(tool['name'])) passing.set(tool['name'], { view, signedTool: check.signedTool });
  }
  return (presentedTool) => {
    const name =
      typeof presentedTool === 'object' && presentedTool !== null
        ? (presentedTool as Record<string, unknown>)['name']
        : undefined;
    const known = typeof name === 'string' ? passing.get(name) : undefined;
    if (known !== undefined && isSameCanonicalValue(presentedTool, known.view))
      return { ok: true, signedTool: known.signedTool };
    return checkPresentedTool(signedManifest, presentedTool);
  };
}
