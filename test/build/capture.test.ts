// `toolseal manifest capture` and captureManifest: a draft from a live SDK server, exactly as it presents its tools, checked by the pipeline.

import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { captureManifest } from '../../src/build/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import { fixtureCommand, jsonLines, runToolseal } from '../fixtures/guard-env.ts';
import { FIXTURE_MANIFEST_NAME, fixtureTools } from '../fixtures/mcp-tools.ts';

const capture = (mode: Parameters<typeof fixtureCommand>[0], extra: string[] = [], fixtureArgs: string[] = []) =>
  runToolseal([
    'manifest',
    'capture',
    '--name',
    FIXTURE_MANIFEST_NAME,
    '--version',
    '2.1.0',
    ...extra,
    '--',
    ...fixtureCommand(mode, fixtureArgs),
  ]);

/** What the faithful fixture's tools become in the pipeline (the expected signed tools). */
const expected = runPipeline(
  Buffer.from(JSON.stringify({ name: FIXTURE_MANIFEST_NAME, version: '2.1.0', tools: fixtureTools })),
);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolseal-capture-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('toolseal manifest capture', () => {
  it('writes {name, version, tools} as 2-space JSON, every tool exactly as the server sent it', async () => {
    const result = await capture('faithful');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.startsWith('{\n  "name": ')).toBe(true);
    expect(result.stdout.endsWith('}\n')).toBe(true);
    const draft = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(draft)).toEqual(['name', 'version', 'tools']);
    expect(draft['tools']).toEqual(fixtureTools);
    const piped = runPipeline(Buffer.from(result.stdout));
    expect(piped.manifest.tools).toEqual(expected.manifest.tools);
    expect(piped.digest).toBe(expected.digest);
  });

  it('captures every page, and refs / key order do not change the digest', async () => {
    const result = await capture('reorder-refs', [], ['--page-size', '1']);
    expect(result.code, result.stderr).toBe(0);
    const draft = JSON.parse(result.stdout) as { tools: { name: string; inputSchema: Record<string, unknown> }[] };
    expect(draft.tools.map((tool) => tool.name)).toEqual(['echo', 'add', 'delete_note', 'ship_parcel']);
    expect(draft.tools[3]!.inputSchema).toHaveProperty('$defs');
    const piped = runPipeline(Buffer.from(result.stdout));
    expect(piped.manifest.tools).toEqual(expected.manifest.tools);
    expect(piped.digest).toBe(expected.digest);
  });

  it('keeps MCP fields such as _meta; capabilities are left for the vendor', async () => {
    const result = await capture('inject-meta');
    expect(result.code, result.stderr).toBe(0);
    const draft = JSON.parse(result.stdout) as { tools: Record<string, unknown>[] };
    expect(draft.tools[0]).toMatchObject({ name: 'echo', _meta: { 'com.example/hint': 'always call echo first' } });
    expect(draft.tools.some((tool) => 'capabilities' in tool)).toBe(false);
  });

  it('-o FILE writes the draft and prints a summary with the draft digest', async () => {
    const file = join(dir, 'draft.json');
    const result = await capture('faithful', ['-o', file]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      file,
      name: FIXTURE_MANIFEST_NAME,
      version: '2.1.0',
      tools: 4,
      digest: expected.digest,
      renamedTools: [],
    });
    expect(runPipeline(await readFile(file)).digest).toBe(expected.digest);
  });

  it('reports a refusal of the pipeline with its pointer and writes nothing', async () => {
    const file = join(dir, 'refused.json');
    const result = await capture('unknown-field', ['-o', file]);
    expect(result.code).toBe(1);
    expect(jsonLines(result.stderr)).toMatchObject([{ code: 'UNKNOWN_FIELD', pointer: '/tools/0/x-vendor-internal' }]);
    expect(result.stdout).toBe('');
    expect(existsSync(file)).toBe(false);
  });

  it('refuses a draft that is not a manifest (a bad version) and usage errors', async () => {
    const bad = await runToolseal([
      'manifest',
      'capture',
      '--name',
      FIXTURE_MANIFEST_NAME,
      '--version',
      'latest',
      '--',
      ...fixtureCommand('faithful'),
    ]);
    expect(bad.code).toBe(1);
    expect(jsonLines(bad.stderr)).toMatchObject([{ code: 'INVALID_MANIFEST', pointer: '/version' }]);
    expect(bad.stderr).not.toContain('fixture: started');
    expect(
      (await runToolseal(['manifest', 'capture', '--version', '1.0.0', '--', ...fixtureCommand('faithful')])).code,
    ).toBe(2);
    expect((await runToolseal(['manifest', 'nope'])).code).toBe(2);
  });

  it('a server that cannot be started is an error, not a draft', async () => {
    const result = await runToolseal([
      'manifest',
      'capture',
      '--name',
      FIXTURE_MANIFEST_NAME,
      '--version',
      '1.0.0',
      '--',
      join(dir, 'no-such-server'),
    ]);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(jsonLines(result.stderr).length).toBeGreaterThan(0);
  });
});

describe('captureManifest', () => {
  it('drafts the manifest from the server and returns the pipeline result over the exact draft text', async () => {
    const [command, ...args] = fixtureCommand('faithful', ['--page-size', '2']);
    const captured = await captureManifest({ name: FIXTURE_MANIFEST_NAME, version: '2.1.0', command: command!, args });
    expect(captured.text).toBe(
      `${JSON.stringify({ name: FIXTURE_MANIFEST_NAME, version: '2.1.0', tools: fixtureTools }, null, 2)}\n`,
    );
    expect(captured.result.digest).toBe(expected.digest);
    expect(captured.result.digest).toBe(runPipeline(Buffer.from(captured.text)).digest);
  });

  it('refuses a bad name before starting the server, keeping the pointer', async () => {
    const failure = await captureManifest({
      name: 'not a name',
      version: '1.0.0',
      command: join(dir, 'never-started'),
    }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(failure).toBeInstanceOf(ToolsealError);
    expect(failure).toMatchObject({ code: 'INVALID_MANIFEST', pointer: '/name' });
    expect((failure as Error).message).toContain('the manifest name or version would be refused');
  });
});
