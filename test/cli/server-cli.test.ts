// The operator commands as child processes: `publisher add`, `keys rotate`, `fsck`.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyAttestation, type Jwks } from '../../src/attest/index.ts';
import { hashToken } from '../../src/registry/index.ts';
import {
  cleanupTempDirs,
  createTestEnv,
  makeTempDir,
  manifestBytes,
  postManifest,
  readAllFiles,
  runCli,
} from '../helpers/registry-helpers.ts';
import { openStore } from '../../src/store/sqlite/index.ts';
import { sqliteDatabaseOf } from '../../src/store/sqlite/index.ts';

afterAll(cleanupTempDirs);

describe('toolseal publisher add', () => {
  it('prints only the token; stores only its hash; refuses IO.GITHUB.ACME and a second io.github.acme', async () => {
    const dataDir = join(makeTempDir(), 'data');
    expect((await runCli(['migrate', '--data', dataDir])).code).toBe(0);
    const added = await runCli(['publisher', 'add', 'io.github.acme', '--unverified-namespace', '--data', dataDir]);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^tsk_[A-Za-z0-9_-]{43}\n$/);
    const token = added.stdout.trim();

    const [upper, again, other] = await Promise.all([
      runCli(['publisher', 'add', 'IO.GITHUB.ACME', '--unverified-namespace', '--data', dataDir]),
      runCli(['publisher', 'add', 'io.github.acme', '--unverified-namespace', '--data', dataDir]),
      runCli(['publisher', 'add', 'io.github.other', '--unverified-namespace', '--data', dataDir]),
    ]);
    expect(upper.code).toBe(1);
    expect(upper.stdout).toBe('');
    expect(JSON.parse(upper.stderr)).toMatchObject({ code: 'BAD_REQUEST' });
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(JSON.parse(again.stderr)).toMatchObject({ code: 'NAMESPACE_TAKEN' });
    expect(other.code).toBe(0);
    expect(other.stdout).toMatch(/^tsk_[A-Za-z0-9_-]{43}\n$/);

    const store = openStore({ dataDir });
    expect(await store.countPublishers()).toBe(2);
    expect((await store.findPublisherByTokenHash(hashToken(token)))?.namespace).toBe('io.github.acme');
    // Case-insensitive uniqueness holds at the store level too (the CLI's pattern only admits lowercase).
    await expect(store.insertPublisher('IO.github.acme', hashToken('x'), new Date().toISOString())).rejects.toThrow(
      /already has a publisher/,
    );
    sqliteDatabaseOf(store).pragma('wal_checkpoint(TRUNCATE)');
    await store.close();
    const files = readAllFiles(dataDir);
    expect(files.includes(Buffer.from(token))).toBe(false);
    expect(files.includes(Buffer.from(other.stdout.trim()))).toBe(false);
    expect(files.includes(Buffer.from(hashToken(token)))).toBe(true);
  });

  it('usage errors exit 2', async () => {
    const result = await runCli(['publisher', 'remove', 'io.github.acme', '--data', join(makeTempDir(), 'data')]);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr.split('\n')[0]!)).toMatchObject({ code: 'USAGE' });
  });

  it('serve refuses a pipeline worker count that is not 0..16 before opening anything', async () => {
    for (const workers of ['-1', '17', 'two', '1.5']) {
      const dataDir = join(makeTempDir(), 'data');
      const result = await runCli(['serve', '--port', '0', '--data', dataDir, '--pipeline-workers', workers]);
      expect(result.code).toBe(2);
      expect(JSON.parse(result.stderr.split('\n')[0]!)).toMatchObject({ code: 'USAGE' });
      expect(existsSync(dataDir)).toBe(false);
    }
  });
});

describe('toolseal keys rotate', () => {
  it('retires the key a running registry uses; its next publish uses the new kid and old attestations still verify', async () => {
    const env = await createTestEnv({ onDisk: true });
    const oldKid = await env.registry.activeKid();
    expect((await postManifest(env.app, manifestBytes({ version: '1.0.0' }), env.token)).status).toBe(201);

    const result = await runCli(['keys', 'rotate', '--data', env.dataDir, '--keys', env.keysDir]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const rotated = JSON.parse(result.stdout) as { retired: string; active: string };
    expect(rotated.retired).toBe(oldKid);
    expect(rotated.active).not.toBe(oldKid);

    expect((await postManifest(env.app, manifestBytes({ version: '1.1.0' }), env.token)).status).toBe(201);
    expect((await env.store.getVersion('io.github.acme/widgets', '1.1.0'))!.kid).toBe(rotated.active);
    const jwks = (await (await env.app.request('/.well-known/jwks.json')).json()) as Jwks;
    expect(jwks.keys.find((key) => key.kid === oldKid)!.exp).toEqual(expect.any(Number));
    expect(jwks.keys.find((key) => key.kid === rotated.active)!.exp).toBeUndefined();
    for (const version of ['1.0.0', '1.1.0']) {
      const row = (await env.store.getVersion('io.github.acme/widgets', version))!;
      const verified = await verifyAttestation(row.attestation, jwks, {
        name: row.name,
        version,
        digest: row.digest as `sha256:${string}`,
      });
      expect(verified.kid).toBe(row.kid);
    }
    await env.close();
  });
});

describe('toolseal fsck', () => {
  it('exits 0 on an intact registry (checking checkpoint signatures with --keys) and 1 listing every problem after corruption', async () => {
    const env = await createTestEnv({ onDisk: true });
    for (const version of ['1.0.0', '1.1.0', '1.2.0'])
      expect((await postManifest(env.app, manifestBytes({ version }), env.token)).status).toBe(201);
    const checkpoints = (await env.store.listCheckpoints()).length;

    const [intact, intactJson] = await Promise.all([
      runCli(['fsck', '--data', env.dataDir, '--keys', env.keysDir]),
      runCli(['fsck', '--data', env.dataDir, '--keys', env.keysDir, '--json']),
    ]);
    expect(intact.code).toBe(0);
    // A key, then an attestation and a Sigstore bundle leaf per version (issue 26).
    expect(intact.stdout).toContain(`3 blobs, 3 versions, 7 log entries`);
    expect(intact.stdout).toContain(`${checkpoints} checkpoints (${checkpoints} signatures)`);
    expect(intact.stdout.trim().endsWith('fsck: all intact')).toBe(true);
    expect(intactJson.code).toBe(0);
    expect(JSON.parse(intactJson.stdout)).toMatchObject({
      ok: true,
      problems: [],
      checked: { blobs: 3, versions: 3, logEntries: 7, checkpointSignatures: checkpoints, bundles: 3 },
    });

    const blob = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!;
    const attested = (await env.store.getVersion('io.github.acme/widgets', '1.1.0'))!;
    const logged = (await env.store.getVersion('io.github.acme/widgets', '1.2.0'))!;
    sqliteDatabaseOf(env.store).exec(
      'DROP TRIGGER blobs_no_update; DROP TRIGGER manifest_versions_immutable_columns; DROP TRIGGER log_entries_no_update',
    );
    sqliteDatabaseOf(env.store)
      .prepare(
        "UPDATE blobs SET bytes = CAST(replace(CAST(bytes AS TEXT), 'lookup', 'LOOKUP') AS BLOB) WHERE digest = ?",
      )
      .run(blob.digest);
    const jws = JSON.parse(attested.attestation.toString('utf8')) as { payload: string };
    const payload = Buffer.from(jws.payload, 'base64url').toString('utf8').replace('1.1.0', '1.1.1');
    sqliteDatabaseOf(env.store)
      .prepare('UPDATE manifest_versions SET attestation = ? WHERE id = ?')
      .run(Buffer.from(JSON.stringify({ ...jws, payload: Buffer.from(payload).toString('base64url') })), attested.id);
    sqliteDatabaseOf(env.store)
      .prepare('UPDATE log_entries SET data = ? WHERE idx = ?')
      .run(Buffer.from('{"forged":1}'), logged.logIndex);
    await env.close();

    const corrupted = await runCli(['fsck', '--data', env.dataDir, '--keys', env.keysDir]);
    expect(corrupted.code).toBe(1);
    const lines = corrupted.stdout.trim().split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^PROBLEM INTEGRITY_ERROR blob ${blob.digest}: bytes hash to sha256:`)),
        expect.stringMatching(/^PROBLEM SIGNATURE_INVALID io\.github\.acme\/widgets@1\.1\.0: SIGNATURE_INVALID/),
        `PROBLEM NOT_IN_LOG io.github.acme/widgets@1.1.0: log entry ${attested.logIndex} is not this attestation`,
        `PROBLEM NOT_IN_LOG io.github.acme/widgets@1.2.0: log entry ${logged.logIndex} is not this attestation`,
        `PROBLEM LOG_INCONSISTENT log entry ${logged.logIndex}: stored leaf hash does not match its data`,
      ]),
    );
    expect(lines.at(-1)).toMatch(/^fsck: \d+ problem\(s\)$/);
  });

  it('exits 1 with NO_REGISTRY naming the folder when there is no database, and creates nothing', async () => {
    const dataDir = join(makeTempDir(), 'nothing-here');
    for (const args of [
      ['fsck'],
      ['publisher', 'add', 'io.github.acme'],
      ['operator', 'add', 'alice'],
      ['host', 'add', 'laptop'],
      ['keys', 'rotate'],
    ]) {
      const result = await runCli([...args, '--data', dataDir]);
      expect(result.code, args.join(' ')).toBe(1);
      const refusal = JSON.parse(result.stderr) as { code: string; message: string };
      expect(refusal.code).toBe('NO_REGISTRY');
      expect(refusal.message).toContain(dataDir);
      expect(existsSync(dataDir), args.join(' ')).toBe(false);
    }
  });
});
