// The tools/list rewrite (MCP 2025-06-18 "Tools" §Listing Tools): signed tools for those that match, nothing for the rest.

import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isJsonObject, type JsonObject } from '../../core/json.ts';
import type { PresentedToolChecker } from '../../dispatch/dispatch.ts';
import {
  GUARD_LIST_REFUSED_CODE,
  GUARD_SESSION_REFUSED_CODE,
  type GuardFinding,
  type MessageFate,
} from './guard-types.ts';

/** What the rewrite reads from, and records into, one guard session. */
export interface ToolsListContext {
  /** `name@version` of the signed manifest. */
  readonly subject: string;
  readonly strict: boolean;
  /**
   * checkPresentedTool against the signed manifest (parsed from its bytes): createPresentedToolChecker's, whose fast
   * path for a tool presented exactly as signed gives the same answers.
   */
  readonly checkTool: PresentedToolChecker;
  /** JCS text of each signed tool as a server presents it (without the registry-only `capabilities` and `approval`), by name, in manifest order. */
  readonly signedTexts: ReadonlyMap<string, string>;
  /** Tools withheld so far in the session; the rewrite adds the ones that fail. */
  readonly withheld: Set<string>;
  /** The server's spelling of each shown tool's name, by signed (NFC) name; the rewrite records what it shows. */
  readonly serverNames: Map<string, string>;
  /** The session's listing state (what the pages of the current listing presented, what was checked); updated here. */
  readonly listing: ListingState;
}

/** One listing: the pages of tools/list from a request without a cursor to the answer without a nextCursor. */
export interface Listing {
  /** NFC names presented (matching or not) on its pages so far. */
  readonly presented: Set<string>;
  /** It began at a cursor the guard did not see handed out: its first pages are unknown, so it says nothing of a subset. */
  readonly partial: boolean;
}

/** What one session's tools/list answers have established so far. */
export interface ListingState {
  /** Signed tools shown to the client since the session began or the server last announced list_changed. */
  readonly checked: Set<string>;
  /** A whole listing (first page to last) has been checked since the session began or the last list_changed. */
  complete: boolean;
  /** The missing tools of the last `tools-subset` report (JSON), so one subset is reported once. */
  reportedMissing: string | undefined;
}

interface PageCheck {
  /** Presented tools that match their signed tool: the signed name, the server's spelling of it, the position. */
  passing: { name: string; presentedName: string; index: number }[];
  /** Names of presented tools that failed on this page. */
  failed: Set<string>;
  findings: GuardFinding[];
}

/**
 * Rewrite one tools/list response. A strict session is refused (`terminate`) on the first finding; otherwise the
 * failing tools are added to `context.withheld` and the response carries the signed texts of the others.
 */
export function rewriteToolsListResponse(
  context: ToolsListContext,
  response: JsonObject,
  id: string | number,
  findings: GuardFinding[],
  listing: Listing,
): MessageFate {
  const result = response['result'];
  if (!isJsonObject(result) || !Array.isArray(result['tools'])) return refuseMalformedList(context, id, findings);
  const page = checkPage(context, result['tools']);
  if (context.strict && page.findings.length > 0) return refuseSession(context, id, page.findings, findings);
  findings.push(...page.findings);
  for (const name of page.failed) context.withheld.add(name);
  const texts = selectShownTexts(context, page, findings);
  recordListing(context, listing, page, result['nextCursor'], findings);
  return { forward: serialiseListResponse(response, result, texts), reply: undefined };
}

function refuseMalformedList(context: ToolsListContext, id: string | number, findings: GuardFinding[]): MessageFate {
  const message = 'the server answered tools/list with something that is not a list of tools';
  findings.push({
    event: 'list-refused',
    manifest: context.subject,
    tool: null,
    reason: 'malformed',
    pointer: '/result/tools',
    message,
  });
  const error: JSONRPCMessage = {
    jsonrpc: '2.0',
    id,
    error: { code: GUARD_LIST_REFUSED_CODE, message: `toolseal guard: ${message}` },
  };
  return { forward: JSON.stringify(error), reply: undefined };
}

/** Compare each presented tool with its signed tool (checkPresentedTool: the same pipeline stages, or its fast path). */
function checkPage(context: ToolsListContext, presented: unknown[]): PageCheck {
  const page: PageCheck = { passing: [], failed: new Set(), findings: [] };
  presented.forEach((tool, index) => {
    const check = context.checkTool(tool);
    if (check.ok) {
      page.passing.push({
        name: check.signedTool['name'] as string,
        presentedName: (tool as JsonObject)['name'] as string,
        index,
      });
      return;
    }
    const name = presentedName(tool);
    if (name !== null) page.failed.add(name);
    page.findings.push({
      event: 'tool-withheld',
      manifest: context.subject,
      tool: name,
      reason: check.reason,
      pointer: check.pointer,
      message: check.message,
      index,
    });
  });
  return page;
}

function refuseSession(
  context: ToolsListContext,
  id: string | number,
  pageFindings: GuardFinding[],
  findings: GuardFinding[],
): MessageFate {
  const first = pageFindings[0]!;
  findings.push(...pageFindings.map((finding) => ({ ...finding, event: 'session-refused' as const })));
  const error: JSONRPCMessage = {
    jsonrpc: '2.0',
    id,
    error: {
      code: GUARD_SESSION_REFUSED_CODE,
      message: `toolseal guard refused the session (strict): ${first.message}`,
      data: {
        code: 'DISPATCH_MISMATCH',
        manifest: context.subject,
        findings: pageFindings.map(({ tool, reason, pointer }) => ({ tool, reason, pointer })),
      },
    },
  };
  return { forward: JSON.stringify(error), reply: undefined, terminate: true };
}

/**
 * The signed texts of the passing tools, once each, skipping (and reporting) those withheld earlier in the session;
 * records the server's spelling of each name shown (the first on the page).
 */
function selectShownTexts(context: ToolsListContext, page: PageCheck, findings: GuardFinding[]): string[] {
  const shown = new Set<string>();
  const texts: string[] = [];
  for (const { name, presentedName, index } of page.passing) {
    if (shown.has(name)) continue;
    if (context.withheld.has(name)) {
      if (!page.failed.has(name)) {
        findings.push({
          event: 'tool-withheld',
          manifest: context.subject,
          tool: name,
          reason: 'withheld',
          pointer: '',
          message: `tool ${JSON.stringify(name)} matches its signed definition now but differed earlier in this session; it stays withheld`,
          index,
        });
      }
      continue;
    }
    shown.add(name);
    context.serverNames.set(name, presentedName);
    context.listing.checked.add(name);
    texts.push(context.signedTexts.get(name)!);
  }
  return texts;
}

/**
 * Record the page into its listing; at the last page (no `nextCursor`), report once at `info` level when the server
 * presented only some of the signed tools (not a finding: a list may vary by authorization).
 */
function recordListing(
  context: ToolsListContext,
  listing: Listing,
  page: PageCheck,
  nextCursor: unknown,
  findings: GuardFinding[],
): void {
  const state = context.listing;
  for (const { name } of page.passing) listing.presented.add(name);
  for (const name of page.failed) listing.presented.add(name);
  if (typeof nextCursor === 'string' || listing.partial) return;
  state.complete = true;
  const missing = [...context.signedTexts.keys()].filter((name) => !listing.presented.has(name));
  const key = missing.length === 0 ? undefined : JSON.stringify(missing);
  if (key === undefined || key === state.reportedMissing) {
    state.reportedMissing = key;
    return;
  }
  state.reportedMissing = key;
  findings.push({
    event: 'tools-subset',
    level: 'info',
    manifest: context.subject,
    tool: null,
    reason: 'subset',
    pointer: '/result/tools',
    message: `the server presented ${context.signedTexts.size - missing.length} of the ${context.signedTexts.size} signed tools; not presented: ${missing.map((name) => JSON.stringify(name)).join(', ')}`,
    missing,
  });
}

/** The response with its `tools` replaced by the given JCS texts; every other member kept (re-serialised). */
function serialiseListResponse(response: JsonObject, result: JsonObject, toolTexts: string[]): string {
  const members = (object: JsonObject, skip: string): string[] =>
    Object.keys(object)
      .filter((key) => key !== skip && object[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${JSON.stringify(object[key])}`);
  const resultText = `{${[...members(result, 'tools'), `"tools":[${toolTexts.join(',')}]`].join(',')}}`;
  return `{${[...members(response, 'result'), `"result":${resultText}`].join(',')}}`;
}

function presentedName(tool: unknown): string | null {
  return isJsonObject(tool) && typeof tool['name'] === 'string' ? tool['name'].normalize('NFC') : null;
}
