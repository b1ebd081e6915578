// toolseal guard's host options, spelled and meaning as in verify/pin/get (--lock, --locked, --log-key, --jwks),
// the deprecated --lockfile, --help, and the folder the server command runs in (the user's, under `npm run`).

import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyLockfile, setLockEntry, writeLockfile } from '../../src/lock/lockfile.ts';
import type { JsonObject } from '../../src/pipeline/index.ts';
import {
  fixtureCommand,
  jsonLines,
  repoRoot,
  runToolseal,
  startTestRegistry,
  toolsealBin,
  type TestRegistry,
} from '../fixtures/guard-env.ts';
import { FIXTURE_MANIFEST_NAME, fixtureTools } from '../fixtures/mcp-tools.ts';
import { REF, VERSION, initialize, manifestWithCapabilities, presentable, rawGuard } from './guard-helpers.ts';

let registry: TestRegistry;
/** Another registry: its log key and attestation keys are foreign to `registry`. */
let impostor: TestRegistry;
let signedTools: JsonObject[];
let published: { digest: string; kid: string; logIndex: number };

beforeAll(async () => {
  registry = await startTestRegistry();
  impostor = await startTestRegistry();
  const outcome = await registry.publish(Buffer.from(JSON.stringify(manifestWithCapabilities(fixtureTools))));
  signedTools = presentable((await registry.registry.getManifest(FIXTURE_MANIFEST_NAME, VERSION)).bytes);
  published = { digest: outcome.record.digest, kid: outcome.record.kid, logIndex: outcome.record.logIndex };
});

afterAll(async () => {
  await registry?.close();
  await impostor?.close();
});

describe("toolseal guard: the host options verify takes (--lock, --log-key, --jwks), and the user's folder", () => {
  let dir: string;
  let lockfile: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolseal-guard-opts-'));
    lockfile = join(dir, 'project.lock');
    const entry = {
      digest: published.digest as `sha256:${string}`,
      kid: published.kid,
      logIndex: published.logIndex,
      registry: registry.url,
    };
    await writeLockfile(lockfile, setLockEntry(emptyLockfile(registry.url), FIXTURE_MANIFEST_NAME, VERSION, entry));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** `toolseal guard --manifest REF OPTIONS -- faithful fixture` with a client that lists the tools and leaves. */
  async function listThroughGuard(options: string[]): Promise<{ code: number | null; stderr: string; listed: string }> {
    const session = rawGuard([
      toolsealBin,
      'guard',
      '--manifest',
      REF,
      ...options,
      '--',
      ...fixtureCommand('faithful'),
    ]);
    session.send(initialize);
    await session.response(0);
    session.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const listed = await session.response(1);
    session.child.stdin.end();
    return { code: await session.exit, stderr: session.stderr(), listed };
  }

  it('--lock FILE names the lockfile, as in verify: with --locked it is the pin, alone the registry fallback', async () => {
    const locked = await listThroughGuard(['--locked', '--lock', lockfile]);
    expect(locked.code).toBe(0);
    expect(jsonLines(locked.stderr)).toMatchObject([{ event: 'verified', locked: true, digest: published.digest }]);
    expect((JSON.parse(locked.listed) as { result: { tools: unknown[] } }).result.tools).toEqual(signedTools);
    // Without --locked (verify accepts that too): no pin is required, the lockfile's registry is used.
    const unlocked = await listThroughGuard(['--lock', lockfile]);
    expect(unlocked.code).toBe(0);
    expect(jsonLines(unlocked.stderr)).toMatchObject([{ event: 'verified', locked: false }]);
    // The deprecated spelling still works, alone too; both at once are a usage error.
    expect((await listThroughGuard(['--lockfile', lockfile])).code).toBe(0);
    const both = await runToolseal(['guard', '--manifest', REF, '--lock', lockfile, '--lockfile', lockfile, '--', 'x']);
    expect(both.code).toBe(2);
    expect(jsonLines(both.stderr)).toMatchObject([{ code: 'USAGE', message: expect.stringContaining('--lockfile') }]);
  });

  it('--log-key and --jwks pin the keys: foreign ones refuse before the server starts, the right ones verify', async () => {
    const foreignJwks = join(dir, 'foreign-jwks.json');
    const ownJwks = join(dir, 'jwks.json');
    await writeFile(foreignJwks, JSON.stringify(await impostor.registry.jwks()));
    await writeFile(ownJwks, JSON.stringify(await registry.registry.jwks()));
    const refusals: [string[], string][] = [
      [['--log-key', impostor.registry.log.verifierString], 'NOT_IN_LOG'],
      [['--jwks', foreignJwks], 'UNKNOWN_KEY'],
    ];
    for (const [options, code] of refusals) {
      const refused = await runToolseal([
        'guard',
        '--manifest',
        REF,
        '--registry',
        registry.url,
        ...options,
        '--',
        ...fixtureCommand('faithful'),
      ]);
      expect(refused.code, refused.stderr).toBe(1);
      expect(jsonLines(refused.stderr)).toMatchObject([{ code }]);
      expect(refused.stderr).not.toContain('fixture: started');
    }
    // A digest reference takes the pinned keys too.
    const byDigest = await runToolseal([
      'guard',
      '--manifest',
      published.digest,
      '--registry',
      registry.url,
      '--jwks',
      foreignJwks,
      '--',
      ...fixtureCommand('faithful'),
    ]);
    expect(byDigest.code, byDigest.stderr).toBe(1);
    expect(jsonLines(byDigest.stderr)).toMatchObject([{ code: 'UNKNOWN_KEY' }]);
    const pinned = await listThroughGuard([
      '--registry',
      registry.url,
      '--log-key',
      registry.registry.log.verifierString,
      '--jwks',
      ownJwks,
    ]);
    expect(pinned.code).toBe(0);
    expect(jsonLines(pinned.stderr)).toMatchObject([{ event: 'verified', digest: published.digest }]);
  });

  it('under `npm run toolseal`, the server command runs in the folder the user ran it from (INIT_CWD)', async () => {
    const userFolder = await realpath(dir);
    const npmEnv = {
      ...process.env,
      INIT_CWD: userFolder,
      npm_package_json: join(repoRoot, 'package.json'),
      npm_package_name: 'toolseal',
      npm_lifecycle_event: 'toolseal',
    };
    const printCwd = [process.execPath, '-e', "process.stderr.write('server cwd ' + process.cwd() + '\\n')"];
    const result = await runToolseal(['guard', '--manifest', REF, '--registry', registry.url, '--', ...printCwd], {
      env: npmEnv,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`server cwd ${userFolder}\n`);
  });

  it('--help names the options', async () => {
    const help = await runToolseal(['guard', '--help']);
    for (const option of ['--lock FILE', '--log-key', '--jwks FILE', '--locked', '--strict'])
      expect(help.stdout + help.stderr).toContain(option);
    expect(help.stdout + help.stderr).not.toContain('--lockfile');
  });
});
