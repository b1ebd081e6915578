// `toolseal audit` as a subprocess against a live registry: exit codes, --json output, the state file, and a
// registry that rewrote its history. Each CLI start takes a few seconds (tsx), hence the long timeouts.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalizeToBytes, type JsonValue } from '../../src/pipeline/index.ts';
import type { AuditReport } from '../../src/audit/index.ts';
import {
  dropTriggers,
  manifestBytes,
  publishOverHttp,
  runCli,
  sql,
  startTestRegistry,
  truncateLog,
  type TestRegistry,
} from './helpers.ts';

let t: TestRegistry;
let stateFile: string;

beforeEach(async () => {
  t = await startTestRegistry();
  stateFile = join(t.dir, 'audit', 'state.json');
});

afterEach(async () => {
  await t.close();
});

function parseReport(stdout: string): AuditReport {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as AuditReport;
}

describe('toolseal audit (subprocess)', () => {
  it('passes on an honest registry, saves the state, then refuses a truncated and regrown log with exit 1 and leaves the state alone', async () => {
    for (const name of ['one', 'two', 'three', 'four'])
      expect((await publishOverHttp(t, manifestBytes(name))).status).toBe(201);

    const first = await runCli(['audit', '--registry', t.url, '--state', stateFile, '--json']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const passed = parseReport(first.stdout);
    expect(passed).toMatchObject({
      ok: true,
      registry: t.url,
      logKey: { verifier: t.registry.log.verifierString, source: 'tofu' },
      consistency: 'first-audit',
      checkpoint: { size: 9 }, // a key, then an attestation and a bundle leaf per publish
      entries: { from: 0, to: 9, checked: 9, attestation: 4, bundle: 4, key: 1 },
      blobs: { checked: 4 },
      problems: [],
      stateFile,
      stateWritten: true,
    });
    const remembered = readFileSync(stateFile);
    expect(JSON.parse(remembered.toString('utf8'))).toMatchObject({
      type: 'toolseal.audit-state/v1',
      size: 9,
      logKey: t.registry.log.verifierString,
    });

    // Human-readable, with the remembered key and nothing new.
    const again = await runCli(['audit', '--registry', t.url, '--state', stateFile]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('remembered in the state file');
    expect(again.stdout).toContain('consistency unchanged');
    expect(again.stdout).toMatch(/audit: ok \(state saved to /);
    const afterAgain = readFileSync(stateFile);

    // The operator rewrites history: back to size 3, then regrows past the remembered size with other manifests.
    truncateLog(t, 3);
    for (const name of ['evil-1', 'evil-2', 'evil-3', 'evil-4'])
      expect((await publishOverHttp(t, manifestBytes(name))).status).toBe(201);
    expect((await t.registry.latestCheckpoint())!.size).toBe(11);

    const forked = await runCli(['audit', '--registry', t.url, '--state', stateFile, '--json']);
    expect(forked.code).toBe(1);
    const refused = parseReport(forked.stdout);
    expect(refused).toMatchObject({
      ok: false,
      consistency: 'refused',
      previous: { size: 9 },
      checkpoint: { size: 11 },
      stateWritten: false,
    });
    expect(refused.problems.map((p) => p.code)).toEqual(['LOG_FORK']);
    const stderrLines = forked.stderr.trim().split('\n');
    expect(stderrLines).toHaveLength(1);
    expect(JSON.parse(stderrLines[0]!)).toMatchObject({ code: 'LOG_FORK' });
    expect(stderrLines[0]).toMatch(/REFUSED/);
    expect(readFileSync(stateFile).equals(afterAgain)).toBe(true);

    const loud = await runCli(['audit', '--registry', t.url, '--state', stateFile]);
    expect(loud.code).toBe(1);
    expect(loud.stdout).toMatch(/REFUSED: the registry rolled back or forked its log/);
    expect(loud.stdout).toMatch(/PROBLEM LOG_FORK/);
    expect(readFileSync(stateFile).equals(afterAgain)).toBe(true);
  }, 180_000);

  it('exits 1 on a rewritten entry with the pinned log key, and 2 on usage or state-file problems', async () => {
    await publishOverHttp(t, manifestBytes('a'));
    const key = t.registry.log.verifierString;
    const ok = await runCli(['audit', '--registry', t.url, '--state', stateFile, '--log-key', key, '--json']);
    expect(ok.code).toBe(0);
    expect(parseReport(ok.stdout).logKey).toEqual({ verifier: key, source: 'flag' });
    const remembered = readFileSync(stateFile);

    const { body } = await publishOverHttp(t, manifestBytes('b'));
    const index = body['logIndex'] as number;
    const jws = JSON.parse((await t.registry.store.readLogEntries(index, index + 1))[0]!.data.toString('utf8')) as {
      payload: string;
    };
    const payload = JSON.parse(Buffer.from(jws.payload, 'base64url').toString('utf8')) as {
      predicate: { publisher: string };
    };
    payload.predicate.publisher = 'someone.else';
    jws.payload = Buffer.from(JSON.stringify(payload)).toString('base64url');
    dropTriggers(t, 'log_entries_no_update');
    sql(t)
      .prepare('UPDATE log_entries SET data = ? WHERE idx = ?')
      .run(Buffer.from(canonicalizeToBytes(jws as unknown as JsonValue)), index);

    const tampered = await runCli(['audit', '--registry', t.url, '--state', stateFile, '--json']);
    expect(tampered.code).toBe(1);
    const report = parseReport(tampered.stdout);
    expect(report.consistency).toBe('proven');
    expect(report.problems.map((p) => p.code).sort()).toEqual(['ROOT_MISMATCH', 'SIGNATURE_INVALID']);
    expect(readFileSync(stateFile).equals(remembered)).toBe(true);

    const badKey = await runCli(['audit', '--registry', t.url, '--log-key', 'not-a-key']);
    expect(badKey.code).toBe(2);
    expect(JSON.parse(badKey.stderr.trim())).toMatchObject({ code: 'USAGE' });
    const noRegistry = await runCli(['audit']);
    expect(noRegistry.code).toBe(2);

    const corrupt = join(t.dir, 'corrupt.json');
    writeFileSync(corrupt, '{"type":"toolseal.audit-state/v1"}');
    const badState = await runCli(['audit', '--registry', t.url, '--state', corrupt]);
    expect(badState.code).toBe(2);
    expect(JSON.parse(badState.stderr.trim())).toMatchObject({ code: 'USAGE' });
    expect(readFileSync(corrupt, 'utf8')).toBe('{"type":"toolseal.audit-state/v1"}');

    const unreachable = join(t.dir, 'never.json');
    const down = await runCli(['audit', '--registry', 'http://127.0.0.1:1', '--state', unreachable, '--json']);
    expect(down.code).toBe(1);
    expect(parseReport(down.stdout).problems[0]!.code).toBe('FETCH_FAILED');
    expect(existsSync(unreachable)).toBe(false);
  }, 180_000);
});
