// manifest capture as a full client: the client capabilities it declares (a real server from npm,
// @modelcontextprotocol/server-everything, shows its sampling, elicitation and roots tools only to clients that
// declare them), a tool list that changes after initialize, a Streamable HTTP server, and --base carry-over.

import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { captureManifest, selectClientCapabilities } from '../../src/build/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import { makeFolder, removeFolders } from '../cli/cli-helpers.ts';
import { fixtureCommand, jsonLines, repoRoot, runToolseal } from '../fixtures/guard-env.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-mcp-server.ts';
import { LATE_TOOL } from '../fixtures/late-tools-server.ts';
import { FIXTURE_MANIFEST_NAME, RUGPULL_DESCRIPTION, fixtureTools } from '../fixtures/mcp-tools.ts';

/** The package's bin (it has no main): dist/index.js, started with the `stdio` transport. */
const everythingEntry = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist',
  'index.js',
);
const lateTools = (mode: string) => [
  process.execPath,
  '--import',
  'tsx',
  join(repoRoot, 'test', 'fixtures', 'late-tools-server.ts'),
  '--mode',
  mode,
];

/** The tools a client declaring `names` gets from server-everything, by name. */
async function everythingTools(names?: Parameters<typeof selectClientCapabilities>[0]): Promise<string[]> {
  const captured = await captureManifest({
    name: 'dev.toolseal.fixture/everything',
    version: '1.0.0',
    command: process.execPath,
    args: [everythingEntry, 'stdio'],
    cwd: repoRoot,
    ...(names === undefined ? {} : { clientCapabilities: selectClientCapabilities(names) }),
  });
  return captured.result.manifest.tools.map((tool) => tool.name);
}

const CONDITIONAL = [
  'get-roots-list',
  'trigger-elicitation-request',
  'trigger-url-elicitation',
  'trigger-sampling-request',
];

describe('client capabilities (server-everything)', () => {
  it('a full client (the default) is shown the roots, sampling and elicitation tools', async () => {
    const tools = await everythingTools();
    for (const name of CONDITIONAL) expect(tools).toContain(name);
    expect(tools).toContain('echo');
  });

  it('a client declaring nothing is not, and one declaring sampling only gets the sampling tool only', async () => {
    const none = await everythingTools([]);
    expect(none).toContain('echo');
    for (const name of CONDITIONAL) expect(none).not.toContain(name);
    const sampling = await everythingTools(['sampling']);
    expect(sampling.filter((name) => CONDITIONAL.includes(name))).toEqual(['trigger-sampling-request']);
  });
});

describe('a tool list that changes', () => {
  it('waits for notifications/tools/list_changed after initialize and takes the settled list', async () => {
    const [command, ...args] = lateTools('after-initialized');
    const captured = await captureManifest({ name: FIXTURE_MANIFEST_NAME, version: '1.0.0', command: command!, args });
    expect(captured.result.manifest.tools.map((tool) => tool.name)).toEqual(['echo', LATE_TOOL.name]);
  });

  it('lists again when the list changes after a listing (the rug-pulling fixture)', async () => {
    const [command, ...args] = fixtureCommand('rugpull');
    const captured = await captureManifest({ name: FIXTURE_MANIFEST_NAME, version: '1.0.0', command: command!, args });
    const deleteNote = captured.result.manifest.tools.find((tool) => tool.name === 'delete_note');
    expect(deleteNote?.description).toBe(RUGPULL_DESCRIPTION);
  });

  it('a list that never settles is FETCH_FAILED, not a draft', async () => {
    const [command, ...args] = lateTools('never-settles');
    const failure = await captureManifest({
      name: FIXTURE_MANIFEST_NAME,
      version: '1.0.0',
      command: command!,
      args,
      settleMs: 20,
    }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(failure).toBeInstanceOf(ToolsealError);
    expect(failure).toMatchObject({ code: 'FETCH_FAILED' });
    expect((failure as Error).message).toContain('still changing');
  });
});

describe('the environment of the server capture starts', () => {
  it("is this process's minus every TOOLSEAL_* variable (tokens never reach the server)", async () => {
    const saved = { ...process.env };
    process.env['TOOLSEAL_HOST_TOKEN'] = 'host-secret';
    process.env['TOOLSEAL_OPERATOR_TOKEN'] = 'operator-secret';
    process.env['PROBE_KEPT'] = 'kept';
    try {
      const captured = await captureManifest({
        name: FIXTURE_MANIFEST_NAME,
        version: '1.0.0',
        command: process.execPath,
        args: ['--import', 'tsx', join(repoRoot, 'test', 'fixtures', 'env-tools-server.ts')],
        cwd: repoRoot,
        settleMs: 50,
      });
      expect(captured.result.manifest.tools[0]?.description).toBe('PROBE_KEPT');
    } finally {
      for (const name of ['TOOLSEAL_HOST_TOKEN', 'TOOLSEAL_OPERATOR_TOKEN', 'PROBE_KEPT'])
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
    }
  });
});

describe('Streamable HTTP (--url, --header)', () => {
  let server: HttpFixture;
  beforeAll(async () => {
    server = await startHttpFixture();
  });
  afterAll(async () => {
    await server.close();
  });

  it('captures the server with the given headers', async () => {
    const result = await runToolseal([
      'manifest',
      'capture',
      '--name',
      FIXTURE_MANIFEST_NAME,
      '--version',
      '3.0.0',
      '--url',
      server.url,
      '--header',
      `Authorization: ${server.authorization}`,
      '--header',
      'X-Trace: capture-test',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ name: FIXTURE_MANIFEST_NAME, version: '3.0.0', tools: fixtureTools });
  });

  it('without the header the server refuses: an error that does not echo the headers, and no draft', async () => {
    const refusedBefore = server.refused;
    const result = await runToolseal([
      'manifest',
      'capture',
      '--name',
      FIXTURE_MANIFEST_NAME,
      '--version',
      '3.0.0',
      '--url',
      server.url,
      '--header',
      'Authorization: Bearer wrong-secret-value',
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(jsonLines(result.stderr)).toMatchObject([{ code: 'FETCH_FAILED' }]);
    expect(result.stderr).not.toContain('wrong-secret-value');
    expect(server.refused).toBeGreaterThan(refusedBefore);
  });

  it('refuses --header without --url, and --url with a command', async () => {
    const header = await runToolseal([
      'manifest',
      'capture',
      '--name',
      FIXTURE_MANIFEST_NAME,
      '--version',
      '1.0.0',
      '--header',
      'A: b',
      '--',
      ...fixtureCommand('faithful'),
    ]);
    expect(header.code).toBe(2);
    const both = await runToolseal([
      'manifest',
      'capture',
      '--name',
      FIXTURE_MANIFEST_NAME,
      '--version',
      '1.0.0',
      '--url',
      server.url,
      '--',
      ...fixtureCommand('faithful'),
    ]);
    expect(both.code).toBe(2);
  });
});

describe('--base: the previous version carries over', () => {
  let folder: string;
  beforeAll(() => {
    folder = makeFolder('toolseal-capture-base-');
  });
  afterAll(() => removeFolders());

  /** The previous version: capabilities on echo and ship_parcel, approval on echo, an older `add`, a removed tool. */
  const baseManifest = {
    name: FIXTURE_MANIFEST_NAME,
    version: '2.0.0',
    description: 'Notes, as the vendor describes them.',
    tools: [
      {
        ...fixtureTools[0],
        capabilities: { network: { hosts: [] }, secrets: { env: [] } },
        approval: { informational: ['/text'] },
      },
      { ...fixtureTools[1], description: 'Adds two numbers.' },
      {
        name: 'old_tool',
        inputSchema: { type: 'object' },
        capabilities: { network: { hosts: ['api.example.com'] } },
      },
      {
        ...fixtureTools[3],
        capabilities: { money: { currencies: ['EUR'], maxAmountMinorPerCall: 2500 } },
      },
    ],
  };

  it('copies description, capabilities (money too) and approval; reports added, removed and changed tools', async () => {
    const baseFile = join(folder, 'base.json');
    const draftFile = join(folder, 'draft.json');
    await import('node:fs/promises').then((fs) => fs.writeFile(baseFile, JSON.stringify(baseManifest)));
    const result = await runToolseal([
      'manifest',
      'capture',
      '--name',
      FIXTURE_MANIFEST_NAME,
      '--version',
      '2.1.0',
      '--base',
      baseFile,
      '-o',
      draftFile,
      '--',
      ...fixtureCommand('faithful'),
    ]);
    expect(result.code, result.stderr).toBe(0);
    const draft = JSON.parse(await readFile(draftFile, 'utf8')) as typeof baseManifest;
    expect(draft.description).toBe(baseManifest.description);
    expect(draft.tools.map((tool) => tool.name)).toEqual(['echo', 'add', 'delete_note', 'ship_parcel']);
    expect(draft.tools[0]).toEqual(baseManifest.tools[0]);
    expect(draft.tools[1]).toEqual(fixtureTools[1]);
    expect(draft.tools[2]).toEqual(fixtureTools[2]);
    expect(draft.tools[3]).toEqual({ ...fixtureTools[3], capabilities: baseManifest.tools[3]!.capabilities });
    const summary = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(summary['digest']).toBe(runPipeline(await readFile(draftFile)).digest);
    expect(summary['base']).toMatchObject({
      from: '2.0.0',
      added: ['delete_note'],
      removed: ['old_tool'],
      changed: [
        {
          tool: 'add',
          changes: [
            {
              pointer: '/tools/1/description',
              before: 'Adds two numbers.',
              after: fixtureTools[1].description,
            },
          ],
        },
      ],
      carried: ['echo', 'ship_parcel'],
    });
    const capabilities = (summary['base'] as { capabilities: { tool: string; direction: string; text: string }[] })
      .capabilities;
    expect(capabilities[0]).toMatchObject({ tool: 'delete_note', direction: 'wider' });
    expect(capabilities.map((change) => change.tool)).toContain('old_tool');
  });

  it('without -o the draft goes to stdout and the change report to stderr', async () => {
    const baseFile = join(folder, 'base-2.json');
    await import('node:fs/promises').then((fs) => fs.writeFile(baseFile, JSON.stringify(baseManifest)));
    const result = await runToolseal([
      'manifest',
      'capture',
      '--name',
      FIXTURE_MANIFEST_NAME,
      '--version',
      '2.1.0',
      '--base',
      baseFile,
      '--',
      ...fixtureCommand('faithful'),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ version: '2.1.0', description: baseManifest.description });
    expect(jsonLines(result.stderr)).toMatchObject([{ base: { added: ['delete_note'], removed: ['old_tool'] } }]);
  });

  it('a base the pipeline refuses is refused before the server starts, with its pointer', async () => {
    const failure = await captureManifest({
      name: FIXTURE_MANIFEST_NAME,
      version: '2.1.0',
      command: join(folder, 'never-started'),
      base: Buffer.from(JSON.stringify({ ...baseManifest, tools: [{ name: 'x', inputSchema: { type: 'array' } }] })),
    }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(failure).toBeInstanceOf(ToolsealError);
    expect((failure as ToolsealError).pointer).toBe('/tools/0/inputSchema/type');
    expect((failure as Error).message).toContain('--base');
  });
});
