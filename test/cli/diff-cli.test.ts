// `toolseal diff NAME@A NAME@B`: the web page's diff (src/web/manifest-diff.ts) of two versions fetched and verified
// from an in-process registry, as text (capability widening first) and as --json.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline/index.ts';
import { diffManifests } from '../../src/web/manifest-diff.ts';
import { jsonLines, runToolseal, startTestRegistry, type TestRegistry } from '../fixtures/guard-env.ts';
import { FIXTURE_MANIFEST_NAME, extraTool, fixtureTools } from '../fixtures/mcp-tools.ts';

const [echo, add, deleteNote, shipParcel] = fixtureTools;
const older = {
  name: FIXTURE_MANIFEST_NAME,
  version: '1.0.0',
  tools: [
    { ...echo, capabilities: { network: { hosts: [] } } },
    add,
    deleteNote,
    {
      ...shipParcel,
      capabilities: {
        network: { hosts: ['api.parcels.example'] },
        money: { currencies: ['EUR'], maxAmountMinorPerCall: 2500 },
      },
    },
  ],
};
const newer = {
  name: FIXTURE_MANIFEST_NAME,
  version: '1.1.0',
  description: 'Notes and parcels.',
  tools: [
    { ...echo, description: 'Returns the text.', capabilities: { network: { hosts: [] } } },
    add,
    {
      ...shipParcel,
      capabilities: {
        network: { hosts: ['api.parcels.example', '*.tracking.example'] },
        money: { currencies: ['EUR'], maxAmountMinorPerCall: 10000 },
      },
    },
    extraTool,
  ],
};

let registry: TestRegistry;
beforeAll(async () => {
  registry = await startTestRegistry();
  await registry.publish(Buffer.from(JSON.stringify(older)));
  await registry.publish(Buffer.from(JSON.stringify(newer)));
});
afterAll(async () => {
  await registry?.close();
});

const diff = (extra: string[] = []) =>
  runToolseal([
    'diff',
    `${FIXTURE_MANIFEST_NAME}@1.0.0`,
    `${FIXTURE_MANIFEST_NAME}@1.1.0`,
    '--registry',
    registry.url,
    ...extra,
  ]);

describe('toolseal diff', () => {
  it('--json is the web page diff of the two verified versions, wider capability changes first', async () => {
    const result = await diff(['--json']);
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    const before = runPipeline(Buffer.from(JSON.stringify(older)));
    const after = runPipeline(Buffer.from(JSON.stringify(newer)));
    // What the page computes: diffManifests over the stored (canonical) bytes of both versions.
    const stored = (bytes: Uint8Array) => JSON.parse(Buffer.from(bytes).toString('utf8')) as typeof before.manifest;
    const expected = diffManifests(stored(before.canonicalBytes), stored(after.canonicalBytes));
    expect(printed['diff']).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(printed['from']).toMatchObject({ version: '1.0.0', digest: before.digest, registry: registry.url });
    expect(printed['to']).toMatchObject({ version: '1.1.0', digest: after.digest });
    const capabilities = (printed['diff'] as { capabilities: { direction: string; tool: string; text: string }[] })
      .capabilities;
    const directions = capabilities.map((change) => change.direction);
    expect(directions.indexOf('narrower')).toBeGreaterThan(directions.lastIndexOf('wider'));
    expect(capabilities).toContainEqual(
      expect.objectContaining({
        tool: 'ship_parcel',
        direction: 'wider',
        text: expect.stringContaining('tracking.example'),
      }),
    );
    expect(capabilities).toContainEqual(
      expect.objectContaining({ tool: 'ship_parcel', direction: 'wider', text: expect.stringContaining('raised') }),
    );
    expect(capabilities).toContainEqual(
      expect.objectContaining({
        tool: extraTool.name,
        direction: 'wider',
        text: expect.stringContaining('declares no capabilities'),
      }),
    );
    expect(capabilities).toContainEqual({
      tool: 'delete_note',
      direction: 'narrower',
      text: 'tool removed',
      pointer: '/tools/2',
    });
  });

  it('the text form starts with the capability changes, widening on top, then the manifest and every tool', async () => {
    const result = await diff();
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`${FIXTURE_MANIFEST_NAME}: 1.0.0 → 1.1.0`);
    expect(lines[1]).toMatch(/^from 1\.0\.0 sha256:[0-9a-f]{64}$/);
    expect(lines[2]).toMatch(/^to {3}1\.1\.0 sha256:[0-9a-f]{64}$/);
    expect(lines[4]).toBe('Capability changes');
    const capabilityLines = lines.slice(5, lines.indexOf('', 5));
    expect(capabilityLines.length).toBeGreaterThanOrEqual(4);
    expect(capabilityLines[0]).toMatch(/^ {2}WIDER {4}"/);
    expect(capabilityLines.at(-1)).toBe('  narrower "delete_note": tool removed (/tools/2)');
    expect(lines, result.stdout).toContain('Manifest');
    expect(lines, result.stdout).toContain('  /description: (absent) → "Notes and parcels."');
    const tools = lines.slice(lines.indexOf('Tools') + 1);
    expect(tools).toContain('  changed   "echo" (/tools/0)');
    expect(tools).toContain(
      '    /tools/0/description: "Returns the text it is given, unchanged." → "Returns the text."',
    );
    expect(tools).toContain('  unchanged "add" (/tools/1)');
    expect(tools).toContain(`  added     "${extraTool.name}" (/tools/3)`);
    expect(tools).toContain('  removed   "delete_note" (/tools/2)');
  });

  it('the signed server comes first: a new remote is WIDER, another package version CHANGED, every /server field', async () => {
    const npm = { registryType: 'npm', identifier: '@acme/notes-mcp', transport: { type: 'stdio' } };
    const signedOlder = { ...newer, version: '1.2.0', server: { packages: [{ ...npm, version: '1.2.0' }] } };
    const signedNewer = {
      ...newer,
      version: '1.3.0',
      server: {
        packages: [{ ...npm, version: '1.3.0' }],
        remotes: [{ type: 'streamable-http', url: 'https://notes.example/mcp' }],
      },
    };
    await registry.publish(Buffer.from(JSON.stringify(signedOlder)));
    await registry.publish(Buffer.from(JSON.stringify(signedNewer)));
    const result = await runToolseal([
      'diff',
      `${FIXTURE_MANIFEST_NAME}@1.2.0`,
      `${FIXTURE_MANIFEST_NAME}@1.3.0`,
      '--registry',
      registry.url,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.slice(4, lines.indexOf('', 4))).toEqual([
      'Signed server',
      '  WIDER    new remote: streamable-http https://notes.example/mcp (/server/remotes/0)',
      '  CHANGED  package @acme/notes-mcp: version 1.2.0 → 1.3.0 (/server/packages/0/version)',
      '  /server/packages/0/version: "1.2.0" → "1.3.0"',
      '  /server/remotes: (absent) → [{"type":"streamable-http","url":"https://notes.example/mcp"}]',
    ]);
    expect(lines.indexOf('Capability changes')).toBeGreaterThan(lines.indexOf('Signed server'));
    // Versions without a server member print no server section (the 1.0.0 → 1.1.0 text test above).
    const plain = await diff();
    expect(plain.stdout).not.toContain('Signed server');
  });

  it('a version that does not verify is a refusal; usage errors are exit 2', async () => {
    const missing = await runToolseal([
      'diff',
      `${FIXTURE_MANIFEST_NAME}@1.0.0`,
      `${FIXTURE_MANIFEST_NAME}@2.0.0`,
      '--registry',
      registry.url,
    ]);
    expect(missing.code).toBe(1);
    expect(jsonLines(missing.stderr)).toMatchObject([{ code: 'NOT_FOUND' }]);
    expect(missing.stdout).toBe('');
    expect((await runToolseal(['diff', `${FIXTURE_MANIFEST_NAME}@1.0.0`, '--registry', registry.url])).code).toBe(2);
  });
});
