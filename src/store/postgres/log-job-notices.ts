// Wake-ups for the sequencer's queue (issue 16 §2): one LISTEN connection per process (PostgreSQL NOTIFY, delivered at
// the sending transaction's commit) on `toolseal_log_jobs` (work was queued) and `toolseal_log_outcomes` (the
// sequencer finished work; the payload names the submitting process). A hint only: the queue is also polled, so a lost
// notice or a lost connection delays work but never loses it.

import pg from 'pg';

export const QUEUED_CHANNEL = 'toolseal_log_jobs';
export const FINISHED_CHANNEL = 'toolseal_log_outcomes';

export type LogJobNotice = { type: 'queued' } | { type: 'finished'; submittedBy: string };

/** Listen on the server at `url` until the returned function is called; reconnects after a lost connection. */
export function listenForLogJobNotices(url: string, onNotice: (notice: LogJobNotice) => void): () => void {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = (): void => {
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    client = next;
    const again = (): void => {
      if (stopped || client !== next) return;
      client = undefined;
      next.end().catch(() => {});
      retry = setTimeout(connect, 1000);
      retry.unref();
    };
    next.on('error', again);
    next.on('end', again);
    next.on('notification', (message) => {
      if (message.channel === QUEUED_CHANNEL) onNotice({ type: 'queued' });
      else if (message.channel === FINISHED_CHANNEL) onNotice({ type: 'finished', submittedBy: message.payload ?? '' });
    });
    next
      .connect()
      .then(() => next.query(`LISTEN ${QUEUED_CHANNEL}; LISTEN ${FINISHED_CHANNEL}`))
      .then(() => {
        // An idle LISTEN connection must not keep the process alive.
        (next as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
      })
      .catch(again);
  };
  connect();
  return () => {
    stopped = true;
    clearTimeout(retry);
    client?.end().catch(() => {});
    client = undefined;
  };
}
