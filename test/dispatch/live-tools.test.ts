// compareLiveTools (src/dispatch/live-tools.ts) and collectFieldChanges (src/dispatch/json-changes.ts): a live tool
// list against the signed manifest, every difference at once, judged as checkPresentedTool judges each tool.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPresentedTool, presentableSignedTool } from '../../src/dispatch/dispatch.ts';
import { collectFieldChanges, equalJson, type FieldChange } from '../../src/dispatch/json-changes.ts';
import { compareLiveTools } from '../../src/dispatch/live-tools.ts';
import { runPipeline, type JsonObject, type JsonValue } from '../../src/pipeline/index.ts';
import { arbitraryJsonValue } from '../helpers/json-arbitraries.ts';
import { FIXTURE_MANIFEST_NAME, extraTool, fixtureTools } from '../fixtures/mcp-tools.ts';

const RUNS = Number(process.env['TOOLSEAL_PROPERTY_RUNS'] ?? 100);

/** The signed manifest as hosts read it (the canonical bytes), with registry-only members on one tool. */
const signed = JSON.parse(
  Buffer.from(
    runPipeline(
      Buffer.from(
        JSON.stringify({
          name: FIXTURE_MANIFEST_NAME,
          version: '1.0.0',
          tools: fixtureTools.map((tool, index) =>
            index === 0
              ? { ...tool, capabilities: { network: { hosts: [] } }, approval: { informational: ['/text'] } }
              : tool,
          ),
        }),
      ),
    ).canonicalBytes,
  ).toString('utf8'),
) as JsonObject;
const signedTools = signed['tools'] as JsonObject[];
/** What a faithful server sends: the tools without the registry-only members, in its own order. */
const faithful = (): JsonObject[] => signedTools.map((tool) => structuredClone(presentableSignedTool(tool)));

const json = arbitraryJsonValue({
  number: fc.integer({ min: -5, max: 5 }),
  text: fc.constantFrom('', 'a', 'b', 'é'),
  key: fc.constantFrom('a', 'b', 'c', '~', '/'),
  maxDepth: 3,
  maxLength: 3,
});

describe('collectFieldChanges', () => {
  it('finds no change exactly when the two values are equal, and a change otherwise', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const changes: FieldChange[] = [];
        collectFieldChanges(a, b, [], changes);
        expect(changes.length === 0).toBe(equalJson(a, b));
      }),
      { numRuns: RUNS * 5 },
    );
  });

  it('each change holds the values found at its pointer on either side', () => {
    const at = (value: JsonValue | undefined, pointer: string): JsonValue | undefined => {
      let node = value;
      for (const raw of pointer.split('/').slice(1)) {
        const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
        if (Array.isArray(node)) node = node[Number(token)];
        else if (node !== null && typeof node === 'object' && Object.hasOwn(node, token)) node = node[token];
        else return undefined;
      }
      return node;
    };
    fc.assert(
      fc.property(json, json, (a, b) => {
        const changes: FieldChange[] = [];
        collectFieldChanges(a, b, [], changes);
        for (const change of changes) {
          expect(at(a, change.pointer)).toEqual(change.before);
          expect(at(b, change.pointer)).toEqual(change.after);
        }
      }),
      { numRuns: RUNS * 5 },
    );
  });
});

describe('compareLiveTools', () => {
  it('no difference for the signed tools in any order; each dropped tool is missing, by its signed pointer', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray([0, 1, 2, 3]), (kept) => {
        const tools = faithful();
        const differences = compareLiveTools(
          signed,
          kept.map((index) => tools[index]),
        );
        const dropped = [0, 1, 2, 3].filter((index) => !kept.includes(index));
        expect(differences).toEqual(
          dropped.map((index) => ({
            tool: signedTools[index]!['name'],
            kind: 'missing',
            pointer: `/tools/${index}`,
            message: `signed tool ${JSON.stringify(signedTools[index]!['name'])} is not presented by the server`,
            changes: [],
          })),
        );
      }),
      { numRuns: RUNS },
    );
  });

  it('a changed description is one `differs` with that one field, agreeing with checkPresentedTool', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 }), fc.string({ minLength: 1, maxLength: 20 }), (index, text) => {
        const tools = faithful();
        const before = tools[index]!['description'];
        fc.pre(text !== before);
        tools[index]!['description'] = text;
        const differences = compareLiveTools(signed, tools);
        const check = checkPresentedTool(signed, tools[index]);
        expect(check.ok).toBe(false);
        expect(differences).toEqual([
          {
            tool: signedTools[index]!['name'],
            kind: 'differs',
            pointer: `/tools/${index}`,
            message: check.ok ? '' : check.message,
            changes: [{ pointer: `/tools/${index}/description`, before, after: text }],
          },
        ]);
      }),
      { numRuns: RUNS },
    );
  });

  it('an unsigned tool, a tool presented twice, and a non-object are unexpected, each at its place in the list', () => {
    const tools: unknown[] = [...faithful(), structuredClone(extraTool), faithful()[1], 'not a tool'];
    expect(compareLiveTools(signed, tools).map(({ tool, kind, pointer }) => ({ tool, kind, pointer }))).toEqual([
      { tool: extraTool.name, kind: 'unexpected', pointer: '/tools/4' },
      { tool: 'add', kind: 'unexpected', pointer: '/tools/5' },
      { tool: '', kind: 'unexpected', pointer: '/tools/6' },
    ]);
  });

  it('the registry-only members (capabilities, approval) are not asked of the server; sending them is a difference', () => {
    const tools = faithful();
    tools[0] = { ...tools[0]!, capabilities: signedTools[0]!['capabilities']! };
    expect(compareLiveTools(signed, tools)).toMatchObject([
      { tool: 'echo', kind: 'differs', changes: [{ pointer: '/tools/0/capabilities', before: undefined }] },
    ]);
  });
});
