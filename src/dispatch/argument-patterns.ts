// Argument pointer patterns (docs/manifest-format.md, "Approval classification"; issue §1): RFC 6901 pointers
// into a call's `arguments` whose token `*` matches any array index or object member, compiled into one trie.

import { ToolsealError } from '../core/errors.ts';
import { parsePointer } from '../core/json-pointer.ts';

/** The token that matches any array index or object member. */
export const WILDCARD_TOKEN = '*';

/** One node of the compiled patterns: where a path can go next, and what a path ending here is. */
export interface PatternNode {
  readonly children: Map<string, PatternNode>;
  wildcard: PatternNode | undefined;
  /** Some informational pattern ends here: the member at this path is removed from the material view. */
  informational: boolean;
  /** Some unordered pattern ends here: the array at this path is compared as a multiset. */
  unordered: boolean;
}

/** A tool's classification, as signed (`approval` in the tool object). */
export interface ApprovalClassification {
  informational?: readonly string[];
  unordered?: readonly string[];
}

/** Compile a tool's classification into one trie (both lists; a path may be in either or both). */
export function compileClassification(approval: ApprovalClassification | undefined): PatternNode {
  const root = createNode();
  for (const pattern of approval?.informational ?? []) addPattern(root, pattern).informational = true;
  for (const pattern of approval?.unordered ?? []) addPattern(root, pattern).unordered = true;
  return root;
}

/** The nodes reached from `nodes` by one path token (an object member name or an array index). */
export function stepPatterns(nodes: readonly PatternNode[], token: string): PatternNode[] {
  const next: PatternNode[] = [];
  for (const node of nodes) {
    const exact = node.children.get(token);
    if (exact !== undefined) next.push(exact);
    if (node.wildcard !== undefined) next.push(node.wildcard);
  }
  return next;
}

function addPattern(root: PatternNode, pattern: string): PatternNode {
  const tokens = parsePointer(pattern);
  if (tokens === undefined || tokens.length === 0) {
    // The envelope refuses these at publish; a signed manifest never holds one.
    throw new ToolsealError('INVALID_MANIFEST', `${JSON.stringify(pattern)} is not an argument pointer pattern`);
  }
  let node = root;
  for (const token of tokens) {
    if (token === WILDCARD_TOKEN) {
      node.wildcard ??= createNode();
      node = node.wildcard;
    } else {
      let child = node.children.get(token);
      if (child === undefined) {
        child = createNode();
        node.children.set(token, child);
      }
      node = child;
    }
  }
  return node;
}

function createNode(): PatternNode {
  return { children: new Map(), wildcard: undefined, informational: false, unordered: false };
}
