// A live server's tools/list against the signed manifest, every difference at once (`toolseal check`): each tool is
// judged as the guard judges it at dispatch (checkPresentedTool: refs inlined, name NFC, JCS equality, the
// registry-only `capabilities` and `approval` left out), and a tool that differs lists every changed field.

import { formatPointer } from '../core/json-pointer.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { checkPresentedTool, normalisePresentedTool, presentableSignedTool } from './dispatch.ts';
import { collectFieldChanges, type FieldChange } from './json-changes.ts';

export interface LiveToolDifference {
  /** The tool's name (as signed; as the server spelt it for an unexpected tool). */
  tool: string;
  /**
   * `differs`: presented otherwise than signed; `unexpected`: presented but not signed (or presented twice);
   * `missing`: signed but not presented.
   */
  kind: 'differs' | 'unexpected' | 'missing';
  /** `/tools/i` of the signed manifest (of the server's list for an unexpected tool). */
  pointer: string;
  message: string;
  /** For `differs`: every field, signed (`before`) against presented (`after`), pointers under `pointer`. */
  changes: FieldChange[];
}

/** Every difference between the signed manifest and the tools a server presents; none when they are the same. */
export function compareLiveTools(signedManifest: JsonObject, liveTools: readonly unknown[]): LiveToolDifference[] {
  const signedTools = Array.isArray(signedManifest['tools']) ? (signedManifest['tools'] as JsonObject[]) : [];
  const differences: LiveToolDifference[] = [];
  const presented = new Set<string>();
  liveTools.forEach((liveTool, liveIndex) => {
    const spelt = readName(liveTool);
    const check = checkPresentedTool(signedManifest, liveTool);
    const name = check.ok ? String(check.signedTool['name']) : normalisedName(liveTool);
    if (name !== undefined && presented.has(name)) {
      differences.push({
        tool: spelt ?? name,
        kind: 'unexpected',
        pointer: formatPointer(['tools', liveIndex]),
        message: `tool ${JSON.stringify(name)} is presented more than once`,
        changes: [],
      });
      return;
    }
    if (name !== undefined) presented.add(name);
    if (check.ok) return;
    const signedIndex = signedTools.findIndex((tool) => tool['name'] === name);
    if (check.reason === 'unknown-tool' || signedIndex < 0) {
      differences.push({
        tool: spelt ?? name ?? '',
        kind: 'unexpected',
        pointer: formatPointer(['tools', liveIndex]),
        message: check.message,
        changes: [],
      });
      return;
    }
    const pointer = formatPointer(['tools', signedIndex]);
    differences.push({
      tool: String(name),
      kind: 'differs',
      pointer,
      message: check.message,
      changes: listChanges(signedTools[signedIndex]!, liveTool).map((change) => ({
        ...change,
        pointer: pointer + change.pointer,
      })),
    });
  });
  signedTools.forEach((tool, index) => {
    const name = String(tool['name']);
    if (presented.has(name)) return;
    differences.push({
      tool: name,
      kind: 'missing',
      pointer: formatPointer(['tools', index]),
      message: `signed tool ${JSON.stringify(name)} is not presented by the server`,
      changes: [],
    });
  });
  return differences;
}

/** Every changed field of a presented tool against its signed one (none when it cannot even be normalised). */
function listChanges(signedTool: JsonObject, liveTool: unknown): FieldChange[] {
  let normalised: JsonValue;
  try {
    normalised = normalisePresentedTool(liveTool);
  } catch {
    return [];
  }
  const changes: FieldChange[] = [];
  collectFieldChanges(presentableSignedTool(signedTool), normalised, [], changes);
  return changes;
}

function readName(tool: unknown): string | undefined {
  if (typeof tool !== 'object' || tool === null) return undefined;
  const name = (tool as Record<string, unknown>)['name'];
  return typeof name === 'string' ? name : undefined;
}

/** The name as the pipeline keys a tool: NFC. */
function normalisedName(tool: unknown): string | undefined {
  return readName(tool)?.normalize('NFC');
}
