// The HTTP bench's load generator: a child process (forked by bench-http.ts) that runs autocannon on request over IPC.
// It lives in its own process so that, on a 2-core machine, the servers under test and the client do not share
// one event loop. It imports nothing of toolseal.

import autocannon, { type AutocannonRequestSpec } from 'autocannon';

export type LoadJob =
  | { kind: 'get'; url: string; path: string; connections: number; seconds: number }
  | {
      kind: 'publish';
      url: string;
      path: string;
      connections: number;
      seconds: number;
      token: string;
      /** The upload with `@@VERSION@@` where the version goes; every request gets a version nobody sent before. */
      template: string;
      versionPrefix: string;
    };

export interface LoadResult {
  seconds: number;
  /** Responses with a 2xx status, per second of the run. */
  okPerSecond: number;
  ok: number;
  statusCounts: Record<string, number>;
  errors: number;
  timeouts: number;
  /** Latency percentiles in milliseconds (full resolution, from every 2xx response). */
  p50: number;
  p99: number;
  /** CPU time the load generator itself used per 2xx response, user + system (it shares the machine's cores). */
  clientCpuMicrosPerOk: number;
}

export type LoadRequest = { id: number; job: LoadJob };
export type LoadReply = { id: number; result: LoadResult } | { id: number; error: string };

let nextVersion = 0;

async function runJob(job: LoadJob): Promise<LoadResult> {
  const requests: AutocannonRequestSpec[] =
    job.kind === 'get'
      ? [{ method: 'GET', path: job.path }]
      : [
          {
            method: 'POST',
            path: job.path,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${job.token}` },
            setupRequest: (request) => ({
              ...request,
              body: job.template.replace('@@VERSION@@', `${job.versionPrefix}${nextVersion++}`),
            }),
          },
        ];
  const latencies: number[] = [];
  const instance = autocannon({
    url: job.url,
    connections: job.connections,
    duration: job.seconds,
    timeout: 10,
    requests,
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, responseTime: number) => {
    if (status >= 200 && status < 300) latencies.push(responseTime);
  });
  const result = await instance;
  const statusCounts: Record<string, number> = {};
  for (const [status, { count }] of Object.entries(result.statusCodeStats)) statusCounts[status] = count;
  return summarize(result.duration, latencies, statusCounts, result.errors, result.timeouts);
}

/** Percentiles and per-status counts as runJob reports them. */
function summarize(
  seconds: number,
  latencies: number[],
  statusCounts: Record<string, number>,
  errors: number,
  timeouts: number,
): LoadResult {
  latencies.sort((a, b) => a - b);
  const at = (q: number): number =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  let ok = 0;
  for (const [status, count] of Object.entries(statusCounts)) if (status.startsWith('2')) ok += count;
  return {
    seconds,
    okPerSecond: ok / seconds,
    ok,
    statusCounts,
    errors,
    timeouts,
    p50: at(0.5),
    p99: at(0.99),
    clientCpuMicrosPerOk: 0,
  };
}

process.on('message', (message: LoadRequest) => {
  const cpuBefore = process.cpuUsage();
  runJob(message.job).then(
    (result) => {
      const cpu = process.cpuUsage(cpuBefore);
      process.send!({
        id: message.id,
        result: { ...result, clientCpuMicrosPerOk: (cpu.user + cpu.system) / Math.max(1, result.ok) },
      } satisfies LoadReply);
    },
    (error: unknown) =>
      process.send!({
        id: message.id,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      } satisfies LoadReply),
  );
});
// The parent going away (or disconnecting when done) ends this process.
process.on('disconnect', () => process.exit(0));
