// `toolseal monitor`: watch one namespace in a registry's transparency log (src/audit/monitor.ts), from cron or CI.

import { parseArgs } from 'node:util';
import { formatMonitorEvent, runMonitor } from '../audit/monitor.ts';
import { resolveRegistryUrl, resolveUserPath } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { readWitnessPolicyFile } from './verify.ts';

export const monitorUsage = `toolseal monitor --registry URL --namespace NS [--state FILE] [--witness-policy FILE] [--json]
                 [--expect-key KID] [--expect-publisher NAME] [--log-key KEY]
  Audits the log from where the last run stopped (--state FILE: consistency-checked like audit) and prints one line
  per new entry concerning NS (publish, yank) and every registry key entry; a second run with nothing new prints
  nothing. --expect-key / --expect-publisher make a publish in NS by another key or publisher a finding;
  --witness-policy (C2SP tlog-policy) requires the checkpoint's witness quorum. Exit 0, or 1 on any finding (one
  line each on stderr); the state advances only when the log verified (and met the quorum).
  --json prints one JSON object {events, findings, size, stateWritten}.`;

export async function runMonitorCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      registry: { type: 'string' },
      namespace: { type: 'string' },
      state: { type: 'string' },
      'witness-policy': { type: 'string' },
      json: { type: 'boolean' },
      'expect-key': { type: 'string' },
      'expect-publisher': { type: 'string' },
      'log-key': { type: 'string' },
    },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  if (values.namespace === undefined || values.namespace === '') throw new UsageError('--namespace NS is required');
  const witnessPolicy =
    values['witness-policy'] === undefined ? undefined : await readWitnessPolicyFile(values['witness-policy']);
  const result = await runMonitor({
    registry: resolveRegistryUrl(values.registry),
    namespace: values.namespace,
    ...(values.state === undefined ? {} : { stateFile: resolveUserPath(values.state) }),
    ...(witnessPolicy === undefined ? {} : { witnessPolicy }),
    ...(values['expect-key'] === undefined ? {} : { expectKid: values['expect-key'] }),
    ...(values['expect-publisher'] === undefined ? {} : { expectPublisher: values['expect-publisher'] }),
    ...(values['log-key'] === undefined ? {} : { logKey: values['log-key'] }),
  });
  if (values.json) {
    const { events, findings, stateWritten } = result;
    await writeStdout(`${JSON.stringify({ events, findings, size: result.audit.entries.to, stateWritten })}\n`);
  } else if (result.events.length > 0) {
    await writeStdout(`${result.events.map(formatMonitorEvent).join('\n')}\n`);
  }
  for (const finding of result.findings)
    process.stderr.write(`${JSON.stringify({ code: 'MONITOR_FINDING', message: finding })}\n`);
  return result.findings.length > 0 ? 1 : 0;
}
