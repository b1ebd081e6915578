// Benchmark of approvals in `toolseal guard` (issue 13 §5): what consuming an approval adds to a tools/call, and what
// the action digest costs against JSON.parse of the same arguments.
//
//   1. An SDK Client over stdio through `toolseal guard --policy` (every refund needs approval) and through
//      `toolseal guard` without a policy, in front of the same refund fixture server, with a real registry on
//      loopback. Each timed policy call is the client's retry of a call already approved: guard consumes the
//      remembered approval (one POST …/consume, which the registry logs and signs into a checkpoint) and forwards it.
//      Both sides in alternating rounds; per-call latencies, p50 and p99.
//   2. The registry's POST …/consume alone (what guard waits for; the HTTP round trip under it, as the same POST for an
//      unknown approval), with the in-memory store of (1) and with a data
//      folder on this disk (WAL, synchronous=FULL: the consumption and its checkpoint are durable before the answer),
//      and the floor under the latter: one one-row SQLite write transaction, WAL, synchronous=FULL, on the same disk.
//   3. computeActionForCall (strict read of the request bytes, signed-schema check, money, material view, JCS,
//      SHA-256) against JSON.parse of the arguments' text, medians of rounds.
//
//   npx tsx scripts/bench-approvals.ts

import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { computeActionForCall, selectSignedTool } from '../src/dispatch/action-digest.ts';
import { APPROVAL_META_KEY } from '../src/protocol/wire.ts';
import { repoRoot, toolsealBin } from '../test/fixtures/guard-env.ts';
import { REFUND_REF } from '../test/fixtures/refund-tools.ts';
import {
  type ApprovalRegistry,
  HOST_NAME,
  startApprovalRegistry,
  toolsCallText,
} from '../test/guard/approval-helpers.ts';
import { median } from './bench-stats.ts';

const ROUNDS = 6;
const CALLS_PER_ROUND = 50;
const WARMUP_CALLS = 30;
const DIGEST_ROUNDS = 9;
const DIGEST_ITERATIONS = 5000;

type CallResult = Awaited<ReturnType<Client['callTool']>>;

async function connect(args: string[]): Promise<Client> {
  const client = new Client({ name: 'bench-approvals', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, cwd: repoRoot, stderr: 'ignore' }));
  return client;
}

const refundArgs = (charge: string) => ({ charge, amount_minor: 4200, currency: 'USD', note: 'bench' });
const callRefund = (client: Client, charge: string): Promise<CallResult> =>
  client.callTool({ name: 'refund', arguments: refundArgs(charge) });

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function timeCall(run: () => Promise<CallResult>, expectApproval: boolean): Promise<number> {
  const start = process.hrtime.bigint();
  const result = await run();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const needed = (result._meta as Record<string, unknown> | undefined)?.[APPROVAL_META_KEY] !== undefined;
  if (result.isError || needed !== expectApproval) throw new Error(`unexpected result ${JSON.stringify(result)}`);
  return ms;
}

export async function benchApprovals(): Promise<string[]> {
  const reg = await startApprovalRegistry();
  const folder = await mkdtemp(join(tmpdir(), 'toolseal-bench-approvals-'));
  const clients: Client[] = [];
  try {
    const policyFile = join(folder, 'policy.json');
    writeFileSync(policyFile, '{"version":1,"requireApproval":[{"money":{"atLeastMinor":0}}]}');
    const server = ['--import', 'tsx', join(repoRoot, 'test', 'fixtures', 'refund-server.ts')];
    const guardArgs = [toolsealBin, 'guard', '--manifest', REFUND_REF, '--registry', reg.url];
    const plain = await connect([...guardArgs, '--', process.execPath, ...server]);
    clients.push(plain);
    const approving = await connect([
      ...guardArgs,
      '--policy',
      policyFile,
      '--host-token',
      reg.hostToken,
      '--',
      process.execPath,
      ...server,
    ]);
    clients.push(approving);

    // Ask once for every call the policy side will make (each its own charge, so its own digest), then approve all.
    const total = WARMUP_CALLS + ROUNDS * CALLS_PER_ROUND;
    const charges = Array.from({ length: total }, (_, i) => `ch_${i}`);
    for (const charge of charges) {
      const meta = (await callRefund(approving, charge))._meta as Record<string, { id: string; digest: string }>;
      const approval = meta[APPROVAL_META_KEY]!;
      await reg.operator.decide(approval.id, { decision: 'approve', digest: approval.digest });
    }
    let next = 0;
    for (let i = 0; i < WARMUP_CALLS; i++) {
      await timeCall(() => callRefund(approving, charges[next++]!), false);
      await timeCall(() => callRefund(plain, `warm_${i}`), false);
    }
    const samples = { plain: [] as number[], approving: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['plain', 'approving'] as const) : (['approving', 'plain'] as const);
      for (const side of order) {
        for (let i = 0; i < CALLS_PER_ROUND; i++) {
          if (side === 'plain') samples.plain.push(await timeCall(() => callRefund(plain, `ch_p${round}_${i}`), false));
          else samples.approving.push(await timeCall(() => callRefund(approving, charges[next++]!), false));
        }
      }
    }
    const consumeMs = await benchConsume(reg);
    const roundTripMs = await benchRoundTrip(reg);
    const durable = await benchDurableConsume(folder);
    const digest = benchDigest(reg.signedBytes, reg.origin);
    const f = (ms: number): string => ms.toFixed(3);
    const p50 = { plain: percentile(samples.plain, 50), approving: percentile(samples.approving, 50) };
    const p99 = { plain: percentile(samples.plain, 99), approving: percentile(samples.approving, 99) };
    const stats = (ms: number[]): string => `p50 ${f(percentile(ms, 50))} ms  p99 ${f(percentile(ms, 99))} ms`;
    return [
      `approvals bench: ${ROUNDS} alternating rounds of ${CALLS_PER_ROUND} sequential tools/call (refund) per side, SDK Client over stdio through toolseal guard, registry on loopback (in this process, in-memory store)`,
      `tools/call  no policy  p50 ${f(p50.plain)} ms  p99 ${f(p99.plain)} ms`,
      `tools/call  approval consumed  p50 ${f(p50.approving)} ms  p99 ${f(p99.approving)} ms`,
      `  added by consuming an approval: p50 ${f(p50.approving - p50.plain)} ms  p99 ${f(p99.approving - p99.plain)} ms (target ≤ 1 ms p50; includes the registry's log leaf and checkpoint signature)`,
      `  of which the registry's POST …/consume alone (HTTP, loopback, in-memory store): ${stats(consumeMs)}`,
      `    the HTTP round trip under it: the same POST for an unknown approval (token checked, body read, NOT_FOUND): ${stats(roundTripMs)}`,
      `  the same consume with a data folder on this disk (WAL, synchronous=FULL): ${stats(durable.consumeMs)}`,
      `  floor of the durable store: a one-row SQLite write transaction (WAL, synchronous=FULL) on the same disk: ${stats(durable.commitMs)}`,
      `action digest  ${f(digest.digestUs)} µs/call   JSON.parse of the arguments ${f(digest.parseUs)} µs   ratio ${(digest.digestUs / digest.parseUs).toFixed(1)}`,
    ];
  } finally {
    for (const client of clients) await client.close().catch(() => undefined);
    await reg.close();
    await rm(folder, { recursive: true, force: true });
  }
}

/** Milliseconds per consumption of an approved request, straight against the registry (what guard waits for). */
async function benchConsume(reg: ApprovalRegistry, prefix = 'c', calls = CALLS_PER_ROUND): Promise<number[]> {
  const signed = selectSignedTool(reg.signedBytes, 'refund', reg.origin);
  const samples: number[] = [];
  for (let i = 0; i < calls; i++) {
    const text = toolsCallText(i, 'refund', JSON.stringify(refundArgs(`ch_${prefix}${i}`)));
    const action = computeActionForCall(signed, new TextEncoder().encode(text), HOST_NAME);
    const envelope = new TextEncoder().encode(JSON.stringify(action.request));
    const created = await reg.host.request(envelope);
    await reg.operator.decide(created.id, { decision: 'approve', digest: created.digest });
    const start = process.hrtime.bigint();
    await reg.host.consume(created.id, envelope);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return samples;
}

/** Milliseconds per POST …/consume of an approval that does not exist: the route's HTTP cost without the consumption. */
async function benchRoundTrip(reg: ApprovalRegistry): Promise<number[]> {
  const envelope = new TextEncoder().encode('{}');
  const samples: number[] = [];
  for (let i = 0; i < CALLS_PER_ROUND; i++) {
    const start = process.hrtime.bigint();
    const refused = await reg.host.consume('apr_AAAAAAAAAAAAAAAAAAAAAA', envelope).then(
      () => undefined,
      (error: unknown) => error,
    );
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    if ((refused as { code?: unknown } | undefined)?.code !== 'NOT_FOUND') throw new Error('expected NOT_FOUND');
  }
  return samples;
}

/**
 * The consume of {@link benchConsume} against a registry whose store is a data folder under `folder` (the disk a
 * deployed registry writes to), and, interleaved with it, one one-row write transaction on a database beside it with
 * the store's pragmas: the commit (one WAL fsync) a consumption cannot answer before.
 */
async function benchDurableConsume(folder: string): Promise<{ consumeMs: number[]; commitMs: number[] }> {
  const reg = await startApprovalRegistry({ dataDir: join(folder, 'data') });
  const floor = new Database(join(folder, 'floor.db'));
  try {
    floor.pragma('journal_mode = WAL');
    floor.pragma('synchronous = FULL');
    floor.exec('CREATE TABLE t (i INTEGER)');
    const insert = floor.prepare('INSERT INTO t (i) VALUES (?)');
    const commitOne = floor.transaction((i: number) => insert.run(i));
    const timeCommit = (i: number): number => {
      const start = process.hrtime.bigint();
      commitOne.immediate(i);
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    for (let i = 0; i < WARMUP_CALLS; i++) timeCommit(i);
    await benchConsume(reg, 'warm', WARMUP_CALLS);
    const consumeMs: number[] = [];
    const commitMs: number[] = [];
    for (let round = 0; round < 2; round++) {
      consumeMs.push(...(await benchConsume(reg, `durable${round}`, CALLS_PER_ROUND / 2)));
      for (let i = 0; i < CALLS_PER_ROUND / 2; i++) commitMs.push(timeCommit(i));
    }
    return { consumeMs, commitMs };
  } finally {
    floor.close();
    await reg.close();
  }
}

/** Microseconds per computeActionForCall and per JSON.parse of the same arguments (medians of rounds). */
function benchDigest(signedBytes: Uint8Array, origin: string): { digestUs: number; parseUs: number } {
  const signed = selectSignedTool(signedBytes, 'refund', origin);
  const argumentsText = JSON.stringify({ ...refundArgs('ch_digest'), tags: ['b', 'a'], lines: ['x', 'y'] });
  const bytes = new TextEncoder().encode(toolsCallText(1, 'refund', argumentsText));
  const digestRuns: number[] = [];
  const parseRuns: number[] = [];
  let sink = 0;
  for (let round = 0; round < DIGEST_ROUNDS; round++) {
    let start = process.hrtime.bigint();
    for (let i = 0; i < DIGEST_ITERATIONS; i++) sink += computeActionForCall(signed, bytes, HOST_NAME).digest.length;
    digestRuns.push(Number(process.hrtime.bigint() - start) / 1e3 / DIGEST_ITERATIONS);
    start = process.hrtime.bigint();
    for (let i = 0; i < DIGEST_ITERATIONS; i++) sink += Object.keys(JSON.parse(argumentsText) as object).length;
    parseRuns.push(Number(process.hrtime.bigint() - start) / 1e3 / DIGEST_ITERATIONS);
  }
  if (sink === 0) throw new Error('nothing computed');
  return { digestUs: median(digestRuns), parseUs: median(parseRuns) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await benchApprovals()) console.log(line);
}
