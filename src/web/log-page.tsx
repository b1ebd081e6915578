// GET /ui/log — the transparency log (docs/transparency-log.md): the latest C2SP checkpoint (size, root, time) and the
// most recent entries (kind, subject, time) with a link to each entry's manifest or key, newest first.

import type { FC } from 'hono/jsx';
import { ToolsealError } from '../core/errors.ts';
import type { Registry } from '../registry/index.ts';
import { Layout, Time } from './layout.tsx';
import { describeLogEntry, type LogRow } from './page-data.ts';

/** Entries per page. */
export const LOG_PAGE_SIZE = 25;

/** `?before=N`: a non-negative integer, or undefined for the newest entries. */
export function readLogCursor(before: string | undefined): number | undefined {
  if (before === undefined || before === '') return undefined;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(before)) throw new ToolsealError('BAD_REQUEST', 'before must be a log index');
  return Number(before);
}

interface CheckpointView {
  size: number;
  rootHash: string;
  createdAt: string;
  note: string;
}

export async function renderLogPage(registry: Registry, before: number | undefined) {
  const latest = await registry.latestCheckpoint();
  if (latest === undefined) {
    return (
      <Layout title="Transparency log">
        <h1>Transparency log</h1>
        <p>The log has no checkpoint yet.</p>
      </Layout>
    );
  }
  const end = Math.min(before ?? latest.size, latest.size);
  const start = Math.max(0, end - LOG_PAGE_SIZE);
  const rows = (await registry.readLogEntryData(start, end))
    .map((data, offset) => describeLogEntry(start + offset, data))
    .reverse();
  const checkpoint: CheckpointView = {
    size: latest.size,
    rootHash: Buffer.from(latest.rootHash).toString('base64'),
    createdAt: latest.createdAt,
    note: latest.note,
  };
  return <LogPage checkpoint={checkpoint} rows={rows} start={start} end={end} />;
}

const LogPage: FC<{ checkpoint: CheckpointView; rows: LogRow[]; start: number; end: number }> = ({
  checkpoint,
  rows,
  start,
  end,
}) => (
  <Layout title="Transparency log">
    <h1>Transparency log</h1>
    <section aria-labelledby="checkpoint">
      <h2 id="checkpoint">Latest checkpoint</h2>
      <dl class="facts">
        <dt>Tree size</dt>
        <dd data-testid="checkpoint-size">{checkpoint.size}</dd>
        <dt>Root hash</dt>
        <dd class="digest mono">{checkpoint.rootHash}</dd>
        <dt>Signed</dt>
        <dd>
          <Time value={checkpoint.createdAt} />
        </dd>
      </dl>
      <details>
        <summary>The signed note</summary>
        <pre>{checkpoint.note}</pre>
      </details>
      <p class="muted">
        Raw: <a href="/v1/log/checkpoint">checkpoint</a>, <a href="/v1/log/key">log key</a>.
      </p>
    </section>
    <section aria-labelledby="entries">
      <h2 id="entries">
        Entries {start} to {end - 1}
      </h2>
      <EntryTable rows={rows} />
      <nav class="pages" aria-label="Log pages">
        {end < checkpoint.size && <a href="/ui/log">Newest entries</a>}
        {start > 0 && <a href={`/ui/log?before=${start}`}>Older entries</a>}
      </nav>
    </section>
  </Layout>
);

const EntryTable: FC<{ rows: LogRow[] }> = ({ rows }) => (
  <div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th scope="col">Index</th>
          <th scope="col">Kind</th>
          <th scope="col">Subject</th>
          <th scope="col">Time</th>
          <th scope="col">Link</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr data-log-index={String(row.index)} data-kind={row.kind}>
            <td>{row.index}</td>
            <td>{row.kind}</td>
            <td class="mono">{row.subject}</td>
            <td>
              <Time value={row.time} />
            </td>
            <td>{row.link === undefined ? '–' : <a href={row.link.href}>{row.link.label}</a>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);
