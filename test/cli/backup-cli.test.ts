// toolseal backup (issue 16 §1) and a tested restore: back up a live registry, restore the file into an empty data
// folder, fsck it clean, start a registry on it with the same keys folder and fetch every manifest's exact bytes.

import { copyFile, mkdir, readdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { versionPath } from '../../src/protocol/routes.ts';
import type { PublisherRecord } from '../../src/registry/index.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { manifestBytes } from '../helpers/registry-helpers.ts';
import { jsonLine, makeFolder, removeFolders, toolseal } from './cli-helpers.ts';

const NAME = 'io.github.acme/widgets';
let root: string;
let live: RunningRegistryServer;
let publisher: PublisherRecord;

beforeAll(async () => {
  root = makeFolder('toolseal-backup-');
  live = await startRegistryServer({
    dataDir: join(root, 'data'),
    keysDir: join(root, 'keys'),
    origin: 'http://127.0.0.1',
    port: 0,
    app: { onUnexpectedError: () => {} },
  });
  publisher = (await live.registry.createPublisher('io.github.acme')).publisher;
  for (const version of ['1.0.0', '1.1.0', '1.2.0']) {
    await live.registry.publish(manifestBytes({ name: NAME, version }), publisher);
  }
  await live.registry.yank(publisher, NAME, '1.0.0', 'broken');
}, 60_000);

afterAll(async () => {
  await live?.close();
  removeFolders();
});

describe('toolseal backup', () => {
  it('backs up a live registry, and the restored copy is intact and serves every manifest', async () => {
    // Publishes keep arriving while the backup runs: the snapshot is consistent either way.
    const during = live.registry.publish(manifestBytes({ name: NAME, version: '1.3.0' }), publisher);
    const run = await toolseal(['backup', '--data', join(root, 'data'), '--out', 'registry.backup'], { cwd: root });
    await during;
    expect(run.code, run.stderr).toBe(0);
    const printed = jsonLine(run.stdout);
    expect(printed).toMatchObject({ backup: 'registry.backup' });
    expect(printed['bytes']).toBe((await stat(join(root, 'registry.backup'))).size);
    expect([3, 4]).toContain(printed['versions']);
    // A single file, nothing temporary left beside it.
    expect((await readdir(root)).filter((name) => name.includes('registry.backup'))).toEqual(['registry.backup']);
    await live.registry.publish(manifestBytes({ name: NAME, version: '2.0.0' }), publisher); // after the backup

    const restored = join(root, 'restored');
    await mkdir(restored);
    await copyFile(join(root, 'registry.backup'), join(restored, 'toolseal.db'));
    // The backup's log is shorter than the checkpoint the registry signed since (2.0.0): the rollback guard refuses
    // it until the operator knowingly moves the checkpoint file aside (docs/deploy.md).
    const refused = await toolseal(['fsck', '--data', restored, '--keys', join(root, 'keys')], { cwd: root });
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stdout).toContain('PROBLEM LOG_ROLLBACK log:');
    await rename(join(root, 'keys', 'log-checkpoint'), join(root, 'log-checkpoint.before-restore'));
    const fsck = await toolseal(['fsck', '--data', restored, '--keys', join(root, 'keys')], { cwd: root });
    expect(fsck.code, fsck.stdout + fsck.stderr).toBe(0);
    expect(fsck.stdout).toContain('fsck: all intact');

    const copy = await startRegistryServer({
      dataDir: restored,
      keysDir: join(root, 'keys'),
      origin: 'http://127.0.0.1',
      port: 0,
      app: { onUnexpectedError: () => {} },
    });
    try {
      const versions = ['1.0.0', '1.1.0', '1.2.0', ...(printed['versions'] === 4 ? ['1.3.0'] : [])];
      for (const version of versions) {
        const response = await fetch(`${copy.url}${versionPath(NAME, version)}`);
        expect(response.status, version).toBe(200);
        expect(Buffer.from(await response.arrayBuffer())).toEqual(
          (await live.registry.getManifest(NAME, version)).bytes,
        );
      }
      expect((await fetch(`${copy.url}${versionPath(NAME, '2.0.0')}`)).status).toBe(404);
      const verify = await toolseal(['verify', `${NAME}@1.2.0`, '--registry', copy.url], { cwd: root });
      expect(verify.code, verify.stderr).toBe(0);
    } finally {
      await copy.close();
    }
  });

  it('refuses a folder with no database (NO_REGISTRY) and writes nothing', async () => {
    const empty = makeFolder('toolseal-backup-empty-');
    const run = await toolseal(['backup', '--data', empty, '--out', 'x.backup'], { cwd: empty });
    expect(run.code).toBe(1);
    expect(jsonLine(run.stderr)).toMatchObject({ code: 'NO_REGISTRY' });
    expect(await readdir(empty)).not.toContain('x.backup');
  });
});
