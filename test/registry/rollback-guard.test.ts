// The rollback guard in process (issue 25 §1): the checkpoint file beside the keys follows every answered write on the
// event-loop paths (a publish's group commit, a yank signed in its own transaction), and a database behind it is
// refused with LOG_ROLLBACK naming both sizes.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHECKPOINT_FILE } from '../../src/keys/checkpoint-file.ts';
import { parseCheckpoint } from '../../src/log/checkpoint.ts';
import { openRegistry } from '../../src/registry/index.ts';
import { findLogRollback } from '../../src/registry/rollback-guard.ts';
import { bodyOf } from '../../src/registry/transparency-log.ts';
import { openStore } from '../../src/store/sqlite/index.ts';
import { cleanupTempDirs, createTestEnv, manifestBytes } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

const NAME = 'io.github.acme/guarded';

function fileCheckpoint(keysDir: string): { size: number; note: string } {
  const note = readFileSync(join(keysDir, CHECKPOINT_FILE), 'utf8');
  return { size: parseCheckpoint(bodyOf(note)).size, note };
}

describe('rollback guard (in process)', () => {
  it('records each answered checkpoint and refuses an empty database under the same keys', async () => {
    const env = await createTestEnv({ onDisk: true });
    try {
      await env.registry.publish(manifestBytes({ name: NAME, version: '1.0.0' }), env.publisher);
      expect(fileCheckpoint(env.keysDir).note).toBe((await env.registry.latestCheckpoint())!.note);
      await env.registry.publish(manifestBytes({ name: NAME, version: '1.1.0' }), env.publisher);
      await env.registry.yank(env.publisher, NAME, '1.0.0', 'broken');
      const latest = (await env.registry.latestCheckpoint())!;
      expect(fileCheckpoint(env.keysDir)).toEqual({ size: latest.size, note: latest.note });
    } finally {
      await env.closeAll();
    }
    // Another (empty) database with the same keys folder: its log is behind what this registry signed.
    const signed = fileCheckpoint(env.keysDir).size;
    const empty = openStore({ dataDir: ':memory:' });
    try {
      expect(await findLogRollback(empty, env.keysDir)).toMatchObject({ signedSize: signed, logSize: 0 });
      await expect(
        openRegistry({ store: empty, keysDir: env.keysDir, origin: 'http://127.0.0.1:8787' }),
      ).rejects.toThrow(
        expect.objectContaining({ code: 'LOG_ROLLBACK', message: expect.stringContaining(`size ${signed}`) }),
      );
    } finally {
      await empty.close();
    }
  });
});
