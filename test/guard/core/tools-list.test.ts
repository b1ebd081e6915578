// The tools/list rewrite with the fast path (issue 14 §5) against the same rewrite with the full check on every tool:
// the same forwarded bytes, findings, withheld tools, server spellings and listing state, page after page.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonObject, JsonValue } from '../../../src/core/json.ts';
import {
  checkPresentedTool,
  createPresentedToolChecker,
  presentableSignedTool,
  type PresentedToolChecker,
} from '../../../src/dispatch/dispatch.ts';
import type { GuardFinding, MessageFate } from '../../../src/guard/core/guard-types.ts';
import { rewriteToolsListResponse, type Listing, type ToolsListContext } from '../../../src/guard/core/tools-list.ts';
import { canonicalizeToText } from '../../../src/pipeline/index.ts';
import { fixtureTools, nfdTool, RUGPULL_DESCRIPTION } from '../../fixtures/mcp-tools.ts';
import { presentVariant, variantSteps, type Variant } from '../../dispatch/presented-tool-variants.ts';
import { localSigned, localSignedNfd } from '../guard-helpers.ts';

const RUNS = Number(process.env['TOOLSEAL_PROPERTY_RUNS'] ?? 100);

const parseBytes = (bytes: Uint8Array): JsonObject => JSON.parse(Buffer.from(bytes).toString('utf8')) as JsonObject;

/** A session's context as ToolGuard builds it, with the given checker. */
function createContext(
  manifest: JsonObject,
  strict: boolean,
  checkTool: PresentedToolChecker,
): ToolsListContext & { checkTool: PresentedToolChecker } {
  const signedTexts = new Map<string, string>();
  for (const tool of manifest['tools'] as JsonObject[])
    signedTexts.set(tool['name'] as string, canonicalizeToText(presentableSignedTool(tool)));
  return {
    subject: `${manifest['name'] as string}@${manifest['version'] as string}`,
    strict,
    checkTool,
    signedTexts,
    withheld: new Set(),
    serverNames: new Map(),
    listing: { checked: new Set(), complete: false, reportedMissing: undefined },
  };
}

/** Everything a rewrite leaves behind in its session. */
function stateOf(context: ToolsListContext, listing: Listing): unknown {
  return {
    withheld: [...context.withheld],
    serverNames: [...context.serverNames],
    checked: [...context.listing.checked],
    complete: context.listing.complete,
    reportedMissing: context.listing.reportedMissing,
    presented: [...listing.presented],
  };
}

interface Page {
  tools: { tool: JsonValue; steps: readonly { variant: Variant; at: number }[] }[];
  last: boolean;
}

const manifests = [localSigned.canonicalBytes, localSignedNfd.canonicalBytes].map(parseBytes);
/** What servers present: the signed views, the vendor's sources (the NFD spelling of café among them). */
const pool: JsonValue[] = [
  ...manifests.flatMap((manifest) =>
    (manifest['tools'] as JsonObject[]).map((tool) => presentableSignedTool(tool) as JsonValue),
  ),
  ...(fixtureTools as unknown as JsonValue[]),
  nfdTool as unknown as JsonValue,
];
const page = fc.record({
  tools: fc.array(fc.record({ tool: fc.constantFrom(...pool), steps: variantSteps }), { maxLength: 6 }),
  last: fc.boolean(),
});

/** Run the pages through a fresh context with `checker`: each page's fate, findings and the state after it. */
function runPages(manifest: JsonObject, strict: boolean, checker: PresentedToolChecker, pages: Page[]): unknown[] {
  const context = createContext(manifest, strict, checker);
  let listing: Listing = { presented: new Set(), partial: false };
  const outcomes: unknown[] = [];
  for (const [index, { tools, last }] of pages.entries()) {
    const presented = tools.map(({ tool, steps }) => presentVariant(tool, steps));
    const result: JsonObject = { tools: presented as JsonValue[] };
    if (!last) result['nextCursor'] = `c${index}`;
    const findings: GuardFinding[] = [];
    const fate: MessageFate = rewriteToolsListResponse(
      context,
      { jsonrpc: '2.0', id: index, result },
      index,
      findings,
      listing,
    );
    outcomes.push({ fate, findings, state: stateOf(context, listing) });
    if (fate.terminate === true) break;
    if (last) listing = { presented: new Set(), partial: false };
  }
  return outcomes;
}

describe('rewriteToolsListResponse: the fast path changes nothing', () => {
  it('property: pages of faithful, changed, extra, renamed and duplicate tools, strict or not', () => {
    const checkers = new Map(manifests.map((manifest) => [manifest, createPresentedToolChecker(manifest)]));
    fc.assert(
      fc.property(
        fc.constantFrom(...manifests),
        fc.boolean(),
        fc.array(page, { minLength: 1, maxLength: 4 }),
        (manifest, strict, pages) => {
          const fast = runPages(manifest, strict, checkers.get(manifest)!, pages);
          const full = runPages(manifest, strict, (tool) => checkPresentedTool(manifest, tool), pages);
          expect(fast).toStrictEqual(full);
        },
      ),
      { numRuns: RUNS * 5 },
    );
  });

  it('a faithful list, a rug pull, an extra tool and the NFD spelling: the same outcomes, as expected', () => {
    const manifest = manifests[1]!;
    const faithful = fixtureTools as unknown as JsonValue[];
    const rugPulled = faithful.map((tool) =>
      (tool as JsonObject)['name'] === 'delete_note'
        ? { ...(tool as JsonObject), description: RUGPULL_DESCRIPTION }
        : tool,
    );
    const extra = { name: 'export_all_notes', inputSchema: { type: 'object' } } as JsonValue;
    const pages: Page[] = [
      {
        tools: [...faithful, nfdTool as unknown as JsonValue, faithful[0]!].map((tool) => ({ tool, steps: [] })),
        last: true,
      },
      { tools: [...rugPulled, extra].map((tool) => ({ tool, steps: [] })), last: true },
      { tools: faithful.map((tool) => ({ tool, steps: [] })), last: true },
    ];
    const fast = runPages(manifest, false, createPresentedToolChecker(manifest), pages);
    expect(fast).toStrictEqual(runPages(manifest, false, (tool) => checkPresentedTool(manifest, tool), pages));
    const [first, second, third] = fast as {
      fate: MessageFate;
      findings: GuardFinding[];
      state: { serverNames: unknown };
    }[];
    expect(first!.findings).toEqual([]);
    expect(first!.state.serverNames).toContainEqual(['caf\u00e9', 'cafe\u0301']);
    const notInfo = (findings: GuardFinding[]): GuardFinding[] => findings.filter((f) => f.level !== 'info');
    expect(notInfo(second!.findings).map(({ tool, reason, pointer }) => ({ tool, reason, pointer }))).toEqual([
      { tool: 'delete_note', reason: 'differs', pointer: '/description' },
      { tool: 'export_all_notes', reason: 'unknown-tool', pointer: '/name' },
    ]);
    expect(notInfo(third!.findings).map(({ tool, reason }) => ({ tool, reason }))).toEqual([
      { tool: 'delete_note', reason: 'withheld' },
    ]);
    // café is missing from the second and third lists: that subset is reported once, at info level.
    const infoEvents = (findings: GuardFinding[]): string[] =>
      findings.filter((f) => f.level === 'info').map((f) => f.event);
    expect(infoEvents(second!.findings)).toEqual(['tools-subset']);
    expect(infoEvents(third!.findings)).toEqual([]);
  });
});
