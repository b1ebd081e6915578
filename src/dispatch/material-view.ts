// The material view of a call's arguments (issue §2): what an approval binds. In this order: informational members
// removed, string values NFC-normalised (object keys are not), unordered arrays sorted innermost first by the
// bytewise order of their items' JCS bytes (RFC 8785). Every other member, declared or not, stays: unknown fields
// are material until reviewed. Pure; the input is never modified.

import { setOwn, type JsonObject, type JsonValue } from '../core/json.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
import {
  compileClassification,
  stepPatterns,
  type ApprovalClassification,
  type PatternNode,
} from './argument-patterns.ts';

/** The material view of `args` under a tool's signed classification (none: everything is material). */
export function buildMaterialView(args: JsonValue, approval: ApprovalClassification | undefined): JsonValue {
  return viewOf(args, [compileClassification(approval)]);
}

/** Post-order walk: children first, so an unordered array is sorted after its items (and inner arrays) are final. */
function viewOf(value: JsonValue, nodes: readonly PatternNode[]): JsonValue {
  if (typeof value === 'string') return value.normalize('NFC');
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = value.map((item, index) => viewOf(item, stepPatterns(nodes, String(index))));
    return nodes.some((node) => node.unordered) ? sortByCanonicalBytes(items) : items;
  }
  const result: JsonObject = {};
  for (const key of Object.keys(value)) {
    const next = stepPatterns(nodes, key);
    if (next.some((node) => node.informational)) continue;
    setOwn(result, key, viewOf(value[key]!, next));
  }
  return result;
}

function sortByCanonicalBytes(items: JsonValue[]): JsonValue[] {
  const keyed = items.map((item) => ({ item, bytes: canonicalizeToBytes(item) }));
  keyed.sort((a, b) => compareBytes(a.bytes, b.bytes));
  return keyed.map((entry) => entry.item);
}

/** Bytewise (unsigned) lexicographic order; a prefix sorts first. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const difference = a[i]! - b[i]!;
    if (difference !== 0) return difference;
  }
  return a.length - b.length;
}
