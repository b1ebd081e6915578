// runFsck: passes on an intact registry; finds a corrupted blob, a corrupted attestation, a rewritten log entry,
// a rewritten log node and a forged checkpoint, and reports every problem without throwing.

import { afterAll, describe, expect, it } from 'vitest';
import { hashLeaf } from '../../src/log/index.ts';
import { runFsck } from '../../src/registry/index.ts';
import {
  cleanupTempDirs,
  createTestEnv,
  manifestBytes,
  postManifest,
  postYank,
  type TestEnv,
} from '../helpers/registry-helpers.ts';
import { sqliteDatabaseOf } from '../../src/store/sqlite/index.ts';
import { readBundleKeyList } from '../../src/keys/bundle-key-files.ts';

afterAll(cleanupTempDirs);

async function populated(): Promise<TestEnv> {
  const env = await createTestEnv();
  for (const version of ['1.0.0', '1.1.0', '2.0.0'])
    expect((await postManifest(env.app, manifestBytes({ version, description: version }), env.token)).status).toBe(201);
  expect((await postManifest(env.app, manifestBytes({ name: 'io.github.acme/other' }), env.token)).status).toBe(201);
  expect(
    (await postYank(env.app, '/v1/manifests/io.github.acme/widgets/1.1.0', { reason: 'x' }, env.token)).status,
  ).toBe(200);
  await env.registry.rotateSigningKey();
  expect((await postManifest(env.app, manifestBytes({ version: '3.0.0' }), env.token)).status).toBe(201);
  return env;
}

describe('runFsck', () => {
  it('an intact registry passes, with every row and checkpoint signature checked', async () => {
    const env = await populated();
    const report = await runFsck(env.store, env.registry.log.verifierString);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.checked).toEqual({
      blobs: 5,
      versions: 5,
      logEntries: await env.store.getLogSize(),
      logNodes: (await env.store.listAllLogNodes()).length,
      checkpoints: (await env.store.listCheckpoints()).length,
      checkpointSignatures: (await env.store.listCheckpoints()).length,
      approvals: 0,
      bundles: 5,
    });
    // 2 keys + 5 attestations + 5 bundles + 1 yank
    expect(report.checked.logEntries).toBe(13);
    await env.close();
  });

  it('checks every Sigstore bundle against its leaf, statement and the bundle keys; finds a swapped envelope and a bundle pointing elsewhere', async () => {
    const env = await populated();
    const bundleKeys = readBundleKeyList(env.keysDir);
    expect(bundleKeys).toHaveLength(2); // rotated with the attestation key
    expect((await runFsck(env.store, env.registry.log.verifierString, bundleKeys)).problems).toEqual([]);
    const db = sqliteDatabaseOf(env.store);
    db.exec('DROP TRIGGER version_bundles_no_update');
    const [one, two] = ['1.0.0', '2.0.0'].map((version) =>
      db
        .prepare(
          "SELECT b.version_id AS id, b.envelope, b.log_index AS logIndex FROM version_bundles b JOIN manifest_versions v ON v.id = b.version_id WHERE v.name = 'io.github.acme/widgets' AND v.version = ?",
        )
        .get(version),
    ) as { id: number; envelope: string; logIndex: number }[];
    db.prepare('UPDATE version_bundles SET envelope = ? WHERE version_id = ?').run(two!.envelope, one!.id);
    db.prepare('UPDATE version_bundles SET log_index = ? WHERE version_id = ?').run(two!.logIndex - 1, two!.id);
    const report = await runFsck(env.store, env.registry.log.verifierString, bundleKeys);
    expect(report.problems.map((p) => [p.code, p.where])).toEqual([
      ['SIGNATURE_INVALID', 'io.github.acme/widgets@1.0.0 bundle'],
      ['NOT_IN_LOG', 'io.github.acme/widgets@2.0.0 bundle'],
    ]);
    // Without the keys folder's list, the envelope is still checked against the statement.
    const withoutKeys = await runFsck(env.store, env.registry.log.verifierString);
    expect(withoutKeys.problems.map((p) => p.where)).toEqual(report.problems.map((p) => p.where));
    await env.close();
  });

  it('finds a corrupted blob row', async () => {
    const env = await populated();
    const digest = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!.digest;
    sqliteDatabaseOf(env.store).exec('DROP TRIGGER blobs_no_update');
    sqliteDatabaseOf(env.store)
      .prepare("UPDATE blobs SET bytes = CAST(replace(CAST(bytes AS TEXT), '1.0.0', '1.0.9') AS BLOB) WHERE digest = ?")
      .run(digest);
    const report = await runFsck(env.store, env.registry.log.verifierString);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      {
        code: 'INTEGRITY_ERROR',
        where: `blob ${digest}`,
        message: expect.stringMatching(/^bytes hash to sha256:[0-9a-f]{64}$/) as unknown as string,
      },
    ]);
    await env.close();
  });

  it('finds a corrupted attestation (bad signature, and no longer the logged leaf)', async () => {
    const env = await populated();
    sqliteDatabaseOf(env.store).exec('DROP TRIGGER manifest_versions_immutable_columns');
    const row = (await env.store.getVersion('io.github.acme/widgets', '2.0.0'))!;
    const jws = JSON.parse(row.attestation.toString('utf8')) as { signature: string };
    const signature = Buffer.from(jws.signature, 'base64url');
    signature[10]! ^= 0x40;
    const tampered = Buffer.from(JSON.stringify({ ...jws, signature: signature.toString('base64url') }));
    sqliteDatabaseOf(env.store)
      .prepare('UPDATE manifest_versions SET attestation = ? WHERE id = ?')
      .run(tampered, row.id);
    const report = await runFsck(env.store, env.registry.log.verifierString);
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => [p.code, p.where])).toEqual([
      ['SIGNATURE_INVALID', 'io.github.acme/widgets@2.0.0'],
      ['NOT_IN_LOG', 'io.github.acme/widgets@2.0.0'],
    ]);
    expect(report.problems[0]!.message).toMatch(/^SIGNATURE_INVALID/);
    await env.close();
  });

  it("finds an attestation swapped onto another version's row (a valid signature for the wrong subject)", async () => {
    const env = await populated();
    sqliteDatabaseOf(env.store).exec('DROP TRIGGER manifest_versions_immutable_columns');
    const donor = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!;
    const target = (await env.store.getVersion('io.github.acme/widgets', '2.0.0'))!;
    sqliteDatabaseOf(env.store)
      .prepare('UPDATE manifest_versions SET attestation = ? WHERE id = ?')
      .run(donor.attestation, target.id);
    const report = await runFsck(env.store);
    expect(report.problems.map((p) => [p.code, p.where])).toEqual([
      ['SIGNATURE_INVALID', 'io.github.acme/widgets@2.0.0'],
      ['NOT_IN_LOG', 'io.github.acme/widgets@2.0.0'],
      // Its bundle carries the statement the row held before (issue 26).
      ['SIGNATURE_INVALID', 'io.github.acme/widgets@2.0.0 bundle'],
    ]);
    expect(report.problems[0]!.message).toMatch(/^SUBJECT_MISMATCH/);
    await env.close();
  });

  it('finds a rewritten log entry: data alone, and data with a matching leaf hash', async () => {
    const env = await populated();
    sqliteDatabaseOf(env.store).exec('DROP TRIGGER log_entries_no_update');
    const index = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!.logIndex;
    sqliteDatabaseOf(env.store)
      .prepare('UPDATE log_entries SET data = ? WHERE idx = ?')
      .run(Buffer.from('{"rewritten":true}'), index);
    let report = await runFsck(env.store, env.registry.log.verifierString);
    expect(report.ok).toBe(false);
    expect(report.problems.slice(0, 2).map((p) => [p.code, p.where])).toEqual([
      ['NOT_IN_LOG', 'io.github.acme/widgets@1.0.0'],
      ['LOG_INCONSISTENT', `log entry ${index}`],
    ]);
    expect(report.problems[1]!.message).toBe('stored leaf hash does not match its data');
    // The tree is rebuilt from the data, so every stored node and checkpoint above the leaf disagrees too.
    const rest = report.problems.slice(2);
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((p) => p.code === 'LOG_INCONSISTENT' && /^(log node|checkpoint) /.test(p.where))).toBe(true);
    const firstBadCheckpoint = Math.min(
      ...rest.filter((p) => p.where.startsWith('checkpoint')).map((p) => Number(p.where.split(' ')[1])),
    );
    // The publish's checkpoint also covers its bundle leaf (index + 1).
    expect(firstBadCheckpoint).toBe(index + 2);

    // A careful forger also rewrites the leaf hash: the stored tree nodes and the signed checkpoints give it away.
    const forged = Buffer.from('{"rewritten":true}');
    sqliteDatabaseOf(env.store)
      .prepare('UPDATE log_entries SET leaf_hash = ? WHERE idx = ?')
      .run(Buffer.from(hashLeaf(forged)), index);
    report = await runFsck(env.store, env.registry.log.verifierString);
    const codes = report.problems.map((p) => p.code);
    expect(codes).toContain('NOT_IN_LOG');
    expect(report.problems.some((p) => p.code === 'LOG_INCONSISTENT' && p.where.startsWith('log node'))).toBe(true);
    expect(report.problems.some((p) => p.code === 'LOG_INCONSISTENT' && p.where.startsWith('checkpoint'))).toBe(true);
    expect(report.problems.some((p) => p.where === `log entry ${index}`)).toBe(false);
    await env.close();
  });

  it('finds a forged checkpoint signature (with the log verifier) and a checkpoint beyond the log', async () => {
    const env = await populated();
    sqliteDatabaseOf(env.store).exec('DROP TRIGGER log_checkpoints_no_update');
    const latest = (await env.store.latestCheckpoint())!;
    const lines = latest.note.split('\n');
    const signatureLine = lines.findIndex((line) => line.startsWith('\u2014 '));
    const parts = lines[signatureLine]!.split(' ');
    const sig = Buffer.from(parts[2]!, 'base64');
    sig[sig.length - 1]! ^= 1;
    lines[signatureLine] = `${parts[0]} ${parts[1]} ${sig.toString('base64')}`;
    sqliteDatabaseOf(env.store)
      .prepare('UPDATE log_checkpoints SET note = ? WHERE size = ?')
      .run(lines.join('\n'), latest.size);
    expect((await runFsck(env.store)).ok).toBe(true); // without the log key only the tree is checked
    const report = await runFsck(env.store, env.registry.log.verifierString);
    expect(report.problems).toEqual([
      {
        code: 'LOG_INCONSISTENT',
        where: `checkpoint ${latest.size}`,
        message: expect.stringMatching(/^SIGNATURE_INVALID/) as unknown as string,
      },
    ]);
    await env.close();
  });

  it('reports every problem at once', async () => {
    const env = await populated();
    sqliteDatabaseOf(env.store).exec(
      'DROP TRIGGER blobs_no_update; DROP TRIGGER manifest_versions_immutable_columns; DROP TRIGGER log_entries_no_update',
    );
    const a = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!;
    const b = (await env.store.getVersion('io.github.acme/other', '1.0.0'))!;
    sqliteDatabaseOf(env.store).prepare('UPDATE blobs SET bytes = ? WHERE digest = ?').run(Buffer.from('{}'), a.digest);
    sqliteDatabaseOf(env.store)
      .prepare("UPDATE manifest_versions SET stored_at = '2000-01-01T00:00:00.000Z' WHERE id = ?")
      .run(b.id);
    sqliteDatabaseOf(env.store).prepare('UPDATE log_entries SET data = ? WHERE idx = 0').run(Buffer.from('x'));
    const report = await runFsck(env.store, env.registry.log.verifierString);
    expect(report.problems.map((p) => [p.code, p.where])).toEqual(
      expect.arrayContaining([
        ['INTEGRITY_ERROR', `blob ${a.digest}`],
        ['SIGNATURE_INVALID', 'io.github.acme/other@1.0.0'],
        ['LOG_INCONSISTENT', 'log entry 0'],
      ]),
    );
    await env.close();
  });
});
