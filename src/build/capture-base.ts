// `manifest capture --base FILE`: what the vendor wrote into the previous version's manifest carries over to the new
// draft (docs/manifest-format.md "Capabilities", "Approval classification": registry-only members no server sends),
// and every tool added, removed or changed since that version is reported (the version diff, src/web/manifest-diff.ts).

import { isJsonObject, type JsonObject } from '../core/json.ts';
import type { PipelineResult } from '../pipeline/index.ts';
import { type CapabilityChange, diffManifests, type FieldChange } from '../web/manifest-diff.ts';

/** The members of a tool only the vendor writes: the capability declaration (money included) and `approval`. */
const VENDOR_TOOL_MEMBERS = ['capabilities', 'approval'] as const;

export interface BaseChanges {
  /** The base's version. */
  from: string;
  /** Tools the server presents that the base does not have (they get no capabilities: the vendor adds them). */
  added: string[];
  /** Tools of the base the server no longer presents. */
  removed: string[];
  /** Tools whose server-sent fields changed, with every changed field (pointers into the new draft). */
  changed: { tool: string; changes: FieldChange[] }[];
  /** Tools whose capabilities and/or approval were carried over from the base. */
  carried: string[];
  /** The capability changes the version diff reports (wider first): an added tool declares none. */
  capabilities: CapabilityChange[];
}

export interface CarriedDraft {
  text: string;
  result: PipelineResult;
  changes: BaseChanges;
}

/**
 * Copy the base's manifest `description` and, for each drafted tool whose name (NFC, as the pipeline keys tools)
 * the base has, that tool's `capabilities` and `approval`; run the result through `check` (the publish pipeline)
 * and compare it with the base.
 */
export function carryOverBase(
  base: PipelineResult,
  drafted: { name: string; version: string; tools: Record<string, unknown>[] },
  check: (text: string) => PipelineResult,
): CarriedDraft {
  const baseTools = new Map(base.manifest.tools.map((tool) => [tool.name, tool as unknown as JsonObject]));
  const carried: string[] = [];
  const tools = drafted.tools.map((tool) => {
    const name = typeof tool['name'] === 'string' ? tool['name'].normalize('NFC') : undefined;
    const before = name === undefined ? undefined : baseTools.get(name);
    if (before === undefined) return tool;
    const copy: Record<string, unknown> = { ...tool };
    let any = false;
    for (const member of VENDOR_TOOL_MEMBERS) {
      if (!Object.hasOwn(before, member) || !isJsonObject(before[member])) continue;
      copy[member] = before[member];
      any = true;
    }
    if (any && name !== undefined) carried.push(name);
    return copy;
  });
  const draft: Record<string, unknown> = { name: drafted.name, version: drafted.version };
  if (base.manifest.description !== undefined) draft['description'] = base.manifest.description;
  draft['tools'] = tools;
  const text = `${JSON.stringify(draft, null, 2)}\n`;
  const result = check(text);
  const diff = diffManifests(base.manifest, result.manifest);
  return {
    text,
    result,
    changes: {
      from: base.version,
      added: diff.tools.filter((tool) => tool.kind === 'added').map((tool) => tool.name),
      removed: diff.tools.filter((tool) => tool.kind === 'removed').map((tool) => tool.name),
      changed: diff.tools
        .filter((tool) => tool.kind === 'changed')
        .map((tool) => ({ tool: tool.name, changes: tool.changes })),
      carried,
      capabilities: diff.capabilities,
    },
  };
}
