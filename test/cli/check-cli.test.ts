// `toolseal check NAME@VERSION`: a live server (stdio fixture, or Streamable HTTP) against its signed manifest,
// fetched and verified from an in-process registry; every difference at once, exit 1 when any, 0 when none.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveToolDifference } from '../../src/dispatch/live-tools.ts';
import { fixtureCommand, jsonLines, runToolseal, startTestRegistry, type TestRegistry } from '../fixtures/guard-env.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-mcp-server.ts';
import { FIXTURE_MANIFEST_NAME, RUGPULL_DESCRIPTION, extraTool, fixtureTools } from '../fixtures/mcp-tools.ts';

const REF = `${FIXTURE_MANIFEST_NAME}@1.0.0`;
let registry: TestRegistry;
let differing: HttpFixture;

beforeAll(async () => {
  registry = await startTestRegistry();
  // capabilities and approval are registry-only: a server never sends them, and check does not ask it to.
  const tools = fixtureTools.map((tool) =>
    tool.name === 'echo'
      ? { ...tool, capabilities: { network: { hosts: [] } }, approval: { informational: ['/text'] } }
      : tool,
  );
  await registry.publish(Buffer.from(JSON.stringify({ name: FIXTURE_MANIFEST_NAME, version: '1.0.0', tools })));
  // A server that changed one tool in two fields, dropped one and added one.
  const changed = fixtureTools
    .filter((tool) => tool.name !== 'ship_parcel')
    .map((tool) =>
      tool.name === 'delete_note'
        ? { ...tool, description: RUGPULL_DESCRIPTION, annotations: { ...tool.annotations, destructiveHint: false } }
        : tool,
    );
  differing = await startHttpFixture([...changed, extraTool]);
});

afterAll(async () => {
  await differing?.close();
  await registry?.close();
});

const check = (extra: string[]) => runToolseal(['check', REF, '--registry', registry.url, ...extra]);

describe('toolseal check', () => {
  it('exit 0 when the server presents exactly the signed tools (another key order and $refs included)', async () => {
    const faithful = await check(['--', ...fixtureCommand('faithful')]);
    expect(faithful.code, faithful.stderr).toBe(0);
    expect(faithful.stdout).toMatch(
      /^dev\.toolseal\.fixture\/notes@1\.0\.0 \(sha256:[0-9a-f]{64}\): the server presents exactly the 4 signed tools\n$/,
    );
    const reordered = await check(['--json', '--', ...fixtureCommand('reorder-refs')]);
    expect(reordered.code, reordered.stderr).toBe(0);
    expect(JSON.parse(reordered.stdout)).toMatchObject({
      name: FIXTURE_MANIFEST_NAME,
      version: '1.0.0',
      tools: { signed: 4, live: 4 },
      differences: [],
    });
  });

  it('exit 1 and every difference at once: a changed tool field by field, an unsigned tool, a missing tool', async () => {
    const result = await check([
      '--json',
      '--url',
      differing.url,
      '--header',
      `Authorization: ${differing.authorization}`,
    ]);
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as { differences: LiveToolDifference[]; tools: unknown };
    expect(report.tools).toEqual({ signed: 4, live: 4 });
    expect(report.differences).toEqual([
      {
        tool: 'delete_note',
        kind: 'differs',
        pointer: '/tools/2',
        message: expect.stringContaining('differs from its signed definition'),
        changes: [
          // In the signed tool's (JCS, sorted) member order.
          { pointer: '/tools/2/annotations/destructiveHint', before: true, after: false },
          { pointer: '/tools/2/description', before: fixtureTools[2].description, after: RUGPULL_DESCRIPTION },
        ],
      },
      {
        tool: extraTool.name,
        kind: 'unexpected',
        pointer: '/tools/3',
        message: `tool "${extraTool.name}" is not in the signed manifest`,
        changes: [],
      },
      {
        tool: 'ship_parcel',
        kind: 'missing',
        pointer: '/tools/3',
        message: 'signed tool "ship_parcel" is not presented by the server',
        changes: [],
      },
    ]);
  });

  it('the text form lists the same differences, one line each and one per changed field', async () => {
    const result = await check(['--url', differing.url, '--header', `Authorization: ${differing.authorization}`]);
    expect(result.code, result.stderr).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/: 3 differences between the server and the signed manifest$/);
    expect(lines[1]).toMatch(/^differs +"delete_note" \(\/tools\/2\): /);
    expect(lines[2]).toBe('    /tools/2/annotations/destructiveHint: signed true, server false');
    expect(lines[3]).toBe(
      `    /tools/2/description: signed ${JSON.stringify(fixtureTools[2].description)}, server ${JSON.stringify(RUGPULL_DESCRIPTION)}`,
    );
    expect(lines[4]).toMatch(/^unexpected "export_all_notes" \(\/tools\/3\): /);
    expect(lines[5]).toMatch(/^missing +"ship_parcel" \(\/tools\/3\): /);
    expect(lines).toHaveLength(6);
  });

  it('a stdio server that presents a subset: exit 1, the missing tool named', async () => {
    const result = await check(['--json', '--', ...fixtureCommand('subset')]);
    expect(result.code, result.stderr).toBe(1);
    expect((JSON.parse(result.stdout) as { differences: LiveToolDifference[] }).differences).toMatchObject([
      { tool: 'ship_parcel', kind: 'missing' },
    ]);
  });

  it('a version the registry cannot prove is a refusal before any server starts; usage errors are exit 2', async () => {
    const missing = await runToolseal([
      'check',
      `${FIXTURE_MANIFEST_NAME}@9.9.9`,
      '--registry',
      registry.url,
      '--',
      ...fixtureCommand('faithful'),
    ]);
    expect(missing.code).toBe(1);
    expect(jsonLines(missing.stderr)).toMatchObject([{ code: 'NOT_FOUND' }]);
    expect(missing.stderr).not.toContain('fixture: started');
    expect((await runToolseal(['check', REF, '--registry', registry.url])).code).toBe(2);
    expect((await runToolseal(['check', '--registry', registry.url, '--', 'x'])).code).toBe(2);
  });
});
