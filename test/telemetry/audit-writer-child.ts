// Child process for the audit log crash test: records decisions in batches forever and prints a line after each
// fsynced flush, until the parent kills it with SIGKILL (the kill lands wherever the writer is, often mid-batch).

import { openAuditLog } from '../../src/telemetry/audit-log.ts';

const file = process.argv[2]!;
const log = await openAuditLog({ file, batchSize: 200, flushIntervalMs: 0, maxBytes: 1 << 30 });
let sequence = 0;
for (;;) {
  for (let i = 0; i < 200; i++) {
    log.record({
      session: `s-${sequence++}`,
      tool: 'get_weather',
      toolDigest: `sha256:${'a'.repeat(64)}`,
      actionDigest: null,
      decision: 'forwarded',
      reason: null,
      approvalId: null,
      upstream: 'weather-server',
    });
  }
  await log.flush();
  process.stdout.write(`flushed ${sequence}\n`);
}
