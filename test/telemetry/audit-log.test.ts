// The audit log: exact record lines, batching with fsync, rotation keeping N files, and crash safety (a torn tail is
// never read back as a record and is cut when the log is opened again, also after a real SIGKILL).

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AuditLog, openAuditLog, readAuditLog } from '../../src/telemetry/audit-log.ts';
import type { AuditDecision } from '../../src/telemetry/audit-record.ts';

const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}` as const;
const APPROVAL = 'apr_AAAAAAAAAAAAAAAAAAAAAA';

function makeDir(): string {
  return mkdtempSync(join(tmpdir(), 'toolseal-audit-'));
}

function decision(index: number): AuditDecision {
  return {
    session: `s-${index}`,
    tool: 'send_money',
    toolDigest: DIGEST,
    actionDigest: DIGEST,
    decision: 'forwarded',
    reason: null,
    approvalId: APPROVAL,
    upstream: 'https://user:secret@mcp.example/mcp?token=abc#x',
  };
}

const fixedNow = () => new Date(Date.UTC(2026, 11, 1, 12, 0, 0, 5));

async function recordAll(log: AuditLog, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) log.record(decision(i));
  await log.flush();
}

describe('audit log records', () => {
  it('writes exactly the audit fields, one JSON line each, with no argument values, userinfo or query', async () => {
    const file = join(makeDir(), 'audit.jsonl');
    const log = await openAuditLog({ file, now: fixedNow, flushIntervalMs: 0 });
    const withExtras = { ...decision(1), arguments: { amount: 100 }, token: 'tk_secret' };
    log.record(withExtras);
    await log.close();
    expect(readFileSync(file, 'utf8')).toBe(
      '{"time":"2026-12-01T12:00:00.005Z","session":"s-1","tool":"send_money",' +
        `"toolDigest":"${DIGEST}","actionDigest":"${DIGEST}","decision":"forwarded","reason":null,` +
        `"approvalId":"${APPROVAL}","upstream":"https://mcp.example/mcp"}\n`,
    );
  });

  it('refuses a record whose fields are not identifiers, digests or approval ids, and writes nothing', async () => {
    const file = join(makeDir(), 'audit.jsonl');
    const log = await openAuditLog({ file, flushIntervalMs: 0 });
    const bad: Partial<AuditDecision>[] = [
      { toolDigest: 'sha256:short' as `sha256:${string}` },
      { session: 'has space' },
      { reason: 'line\nbreak' },
      { approvalId: 'not-an-approval' },
      { tool: 'tab\there' },
      { decision: 'maybe' as AuditDecision['decision'] },
    ];
    for (const change of bad) {
      expect(() => log.record({ ...decision(0), ...change })).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    }
    await log.close();
    expect(statSync(file).size).toBe(0);
  });

  it('the type admits no argument values: an object literal with arguments does not compile', () => {
    // @ts-expect-error arguments are not an audit field
    const literal: AuditDecision = { ...decision(0), arguments: { amount: 1 } };
    expect(literal.session).toBe('s-0');
  });
});

describe('audit log batching and rotation', () => {
  it('writes nothing until a batch is full or flushed, then whole fsynced batches', async () => {
    const file = join(makeDir(), 'audit.jsonl');
    const log = await openAuditLog({ file, batchSize: 10, flushIntervalMs: 0 });
    for (let i = 0; i < 9; i++) log.record(decision(i));
    await new Promise((resolve) => setImmediate(resolve));
    expect(statSync(file).size).toBe(0);
    log.record(decision(9)); // the tenth record starts the batch's write
    log.record(decision(10));
    await log.flush();
    const { records, skipped } = await readAuditLog(file);
    expect(skipped).toBe(0);
    expect(records.map((r) => r.session)).toEqual(Array.from({ length: 11 }, (_, i) => `s-${i}`));
    await log.close();
  });

  it('rotates by size, keeps N files, and loses no record of the kept files', async () => {
    const dir = makeDir();
    const file = join(dir, 'audit.jsonl');
    const log = await openAuditLog({ file, batchSize: 5, flushIntervalMs: 0, maxBytes: 2000, keep: 2, now: fixedNow });
    for (let batch = 0; batch < 12; batch++) await recordAll(log, batch * 5, 5);
    await log.close();
    expect(readdirSync(dir).sort()).toEqual(['audit.jsonl', 'audit.jsonl.1', 'audit.jsonl.2']);
    const lineBytes = readFileSync(file, 'utf8').split('\n')[0]!.length + 1;
    const perFile = Math.floor(2000 / (5 * lineBytes)) * 5; // whole batches fit under maxBytes
    const files = [`${file}.2`, `${file}.1`, file];
    const sessions: string[] = [];
    for (const name of files) {
      expect(statSync(name).size).toBeLessThanOrEqual(2000);
      const { records, skipped } = await readAuditLog(name);
      expect(skipped).toBe(0);
      sessions.push(...records.map((r) => r.session));
    }
    const total = 60;
    const first = total - sessions.length;
    expect(sessions.length).toBeGreaterThanOrEqual(2 * perFile);
    expect(sessions).toEqual(Array.from({ length: sessions.length }, (_, i) => `s-${first + i}`));
  });
});

describe('audit log crash safety', () => {
  it('never reads a torn line back as a record, and opening the log cuts the torn tail', async () => {
    const file = join(makeDir(), 'audit.jsonl');
    const log = await openAuditLog({ file, batchSize: 8, flushIntervalMs: 0, now: fixedNow });
    await recordAll(log, 0, 8);
    await log.close();
    const whole = readFileSync(file);
    const lineEnds = [...whole.entries()].filter(([, byte]) => byte === 0x0a).map(([index]) => index + 1);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: whole.length }), async (cut) => {
        writeFileSync(file, whole);
        truncateSync(file, cut); // what a crash in the middle of the batch's write leaves
        const wholeLines = lineEnds.filter((end) => end <= cut).length;
        const read = await readAuditLog(file);
        expect(read.records.map((r) => r.session)).toEqual(Array.from({ length: wholeLines }, (_, i) => `s-${i}`));
        expect(read.skipped).toBe(lineEnds.includes(cut) || cut === 0 ? 0 : 1);
        const reopened = await openAuditLog({ file, flushIntervalMs: 0, now: fixedNow });
        await recordAll(reopened, 100, 1);
        await reopened.close();
        const after = await readAuditLog(file);
        expect(after.skipped).toBe(0);
        expect(after.records.map((r) => r.session)).toEqual([
          ...Array.from({ length: wholeLines }, (_, i) => `s-${i}`),
          's-100',
        ]);
      }),
      { numRuns: 60 },
    );
  });

  it('a writer killed with SIGKILL mid-batch leaves only whole lines, in order', async () => {
    const file = join(makeDir(), 'audit.jsonl');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'audit-writer-child.ts'), file],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const acknowledged = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const flushes = out.match(/flushed (\d+)\n/g) ?? [];
        if (flushes.length >= 5) {
          child.kill('SIGKILL');
          resolve(Number(flushes.at(-1)!.slice(8, -1)));
        }
      });
      child.on('exit', () => reject(new Error(`child exited early: ${stderr}`)));
    });
    await new Promise((resolve) => child.once('close', resolve));
    const { records } = await readAuditLog(file);
    expect(records.length).toBeGreaterThanOrEqual(acknowledged); // every acknowledged (fsynced) record is there
    expect(records.map((r) => r.session)).toEqual(Array.from({ length: records.length }, (_, i) => `s-${i}`));
    const reopened = await openAuditLog({ file, flushIntervalMs: 0 });
    await recordAll(reopened, 1_000_000, 1);
    await reopened.close();
    const after = await readAuditLog(file);
    expect(after.skipped).toBe(0);
    expect(after.records.at(-1)!.session).toBe('s-1000000');
  });
});
