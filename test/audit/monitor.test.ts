// The namespace monitor against an in-process registry: one event per new entry of the namespace (publish, yank) and
// per key entry, nothing on a second run, other namespaces ignored, --expect-publisher / --expect-key findings, and a
// witness policy whose quorum the registry's checkpoint lacks (WITNESS_QUORUM, state not advanced). Also the CLI.

import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatMonitorEvent, runMonitor } from '../../src/audit/monitor.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';
import { formatCosignerVkey, parseWitnessPolicy } from '../../src/log/index.ts';
import { yankPath } from '../../src/protocol/routes.ts';
import {
  manifestBytes,
  NAMESPACE,
  publishOverHttp,
  runCli,
  startTestRegistry,
  type TestRegistry,
} from '../log-e2e/helpers.ts';

let t: TestRegistry;
beforeEach(async () => {
  t = await startTestRegistry();
});
afterEach(async () => {
  await t.close();
});

async function yank(name: string, version: string): Promise<void> {
  const response = await fetch(`${t.url}${yankPath(`${NAMESPACE}/${name}`, version)}`, {
    method: 'POST',
    body: JSON.stringify({ reason: 'broken' }),
    headers: { Authorization: `Bearer ${t.token}`, 'Content-Type': 'application/json' },
  });
  expect(response.status).toBeLessThan(300);
}

describe('runMonitor', () => {
  it('reports each new entry once, ignores other namespaces, and flags an unexpected publisher', async () => {
    const stateFile = join(t.dir, 'monitor', 'state.json');
    expect((await publishOverHttp(t, manifestBytes('one'))).status).toBe(201);
    const first = await runMonitor({ registry: t.url, namespace: NAMESPACE, stateFile });
    expect(first.findings).toEqual([]);
    expect(first.stateWritten).toBe(true);
    expect(first.events.map((e) => [e.kind, e.subject])).toEqual([
      ['key', undefined],
      ['publish', `${NAMESPACE}/one@1.0.0`],
    ]);
    expect(first.events[1]).toMatchObject({ publisher: NAMESPACE, digest: expect.stringMatching(/^sha256:/) });
    expect(formatMonitorEvent(first.events[1]!)).toContain(`publish ${NAMESPACE}/one@1.0.0 sha256:`);

    const again = await runMonitor({ registry: t.url, namespace: NAMESPACE, stateFile });
    expect(again).toMatchObject({ events: [], findings: [] });

    expect((await publishOverHttp(t, manifestBytes('two'))).status).toBe(201);
    await yank('one', '1.0.0');
    const other = await runMonitor({
      registry: t.url,
      namespace: 'io.github.someone-else',
      stateFile: `${stateFile}.2`,
    });
    expect(other.events.filter((e) => e.kind !== 'key')).toEqual([]);
    const third = await runMonitor({
      registry: t.url,
      namespace: NAMESPACE,
      stateFile,
      expectPublisher: 'io.github.not-us',
      expectKid: first.events[1]?.kid as string,
    });
    expect(third.events.map((e) => [e.kind, e.subject])).toEqual([
      ['publish', `${NAMESPACE}/two@1.0.0`],
      ['yank', `${NAMESPACE}/one@1.0.0`],
    ]);
    expect(third.findings).toHaveLength(1);
    // Entry 3: the key (0), one's attestation (1) and bundle leaf (2) come before it.
    expect(third.findings[0]).toMatch(/entry 3: publisher io\.github\.audit-test, expected io\.github\.not-us/);
  });

  it('refuses a checkpoint without the witness quorum and keeps its state', async () => {
    expect((await publishOverHttp(t, manifestBytes('one'))).status).toBe(201);
    const witness = formatCosignerVkey('witness.example/w', generateEd25519KeyPair().privateKey);
    const witnessPolicy = parseWitnessPolicy(`witness W ${witness}\nquorum W\n`);
    const stateFile = join(t.dir, 'monitor', 'quorum.json');
    const refused = await runMonitor({ registry: t.url, namespace: NAMESPACE, stateFile, witnessPolicy });
    expect(refused.findings).toEqual([expect.stringMatching(/^WITNESS_QUORUM: /)]);
    expect(refused.stateWritten).toBe(false);
    const none = await runMonitor({
      registry: t.url,
      namespace: NAMESPACE,
      stateFile,
      witnessPolicy: parseWitnessPolicy('quorum none\n'),
    });
    expect(none.findings).toEqual([]);
    expect(none.events.map((e) => e.kind)).toEqual(['key', 'publish']); // the refused run did not advance
  });
});

describe('toolseal monitor', () => {
  it('prints one line per entry, nothing the second time, and exits 1 on a finding', async () => {
    expect((await publishOverHttp(t, manifestBytes('one'))).status).toBe(201);
    const stateFile = join(t.dir, 'cli-state.json');
    const base = ['monitor', '--registry', t.url, '--namespace', NAMESPACE, '--state', stateFile];
    const first = await runCli(base);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout.trim().split('\n')).toHaveLength(2);
    const second = await runCli(base);
    expect(second).toMatchObject({ code: 0, stdout: '' });
    expect((await publishOverHttp(t, manifestBytes('two'))).status).toBe(201);
    const flagged = await runCli([...base, '--expect-publisher', 'io.github.not-us', '--json']);
    expect(flagged.code).toBe(1);
    const output = JSON.parse(flagged.stdout) as { events: unknown[]; findings: string[] };
    expect(output.events).toHaveLength(1);
    expect(JSON.parse(flagged.stderr.trim()).code).toBe('MONITOR_FINDING');
  });
});
