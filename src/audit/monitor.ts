// A namespace monitor (what certificate-transparency monitors give domain owners, RFC 9162 §8.3): an audit of the log
// from where the last run stopped (run-audit.ts: checkpoint, consistency, every entry checked), reporting each new
// entry that concerns one namespace (publish, yank) and every registry key entry; optionally the checkpoint must meet
// a C2SP tlog-policy witness quorum. Unexpected signing keys or publishers are findings.

// The state (the audit state format, state.ts) advances only when the audit passed and the quorum held; a finding
// about an entry is reported once, and the state still advances past it (the log itself verified).

import { decodeUtf8Strict } from '../core/bytes.ts';
import { isJsonObject } from '../core/json.ts';
import { parseLogEntry } from '../log/entries.ts';
import type { WitnessPolicy } from '../log/policy.ts';
import { parseStrict } from '../pipeline/parse.ts';
import type { AuditReport } from './report.ts';
import { runAudit } from './run-audit.ts';
import { readAuditStateFile, writeAuditStateFile } from './state.ts';

export interface MonitorOptions {
  registry: string;
  /** The namespace watched, e.g. io.github.acme. */
  namespace: string;
  /** Where the monitor remembers the log it verified; without it every run starts from entry 0. */
  stateFile?: string;
  witnessPolicy?: WitnessPolicy;
  /** Attestations in the namespace must be signed with this kid, else a finding. */
  expectKid?: string;
  /** Attestations in the namespace must name this publisher, else a finding. */
  expectPublisher?: string;
  logKey?: string;
  fetch?: typeof globalThis.fetch;
  nowSeconds?: number;
}

export interface MonitorEvent {
  index: number;
  kind: 'publish' | 'yank' | 'key';
  /** name@version for publish and yank. */
  subject?: string;
  digest?: string;
  kid?: string;
  publisher?: string;
  reason?: string;
  /** Why this entry is a finding, when it is. */
  finding?: string;
}

export interface MonitorResult {
  events: MonitorEvent[];
  /** Everything that makes the run fail (exit 1): audit problems, no witness quorum, unexpected entries. */
  findings: string[];
  audit: AuditReport;
  stateWritten: boolean;
}

export async function runMonitor(options: MonitorOptions): Promise<MonitorResult> {
  const loaded = options.stateFile === undefined ? undefined : await readAuditStateFile(options.stateFile);
  const events: MonitorEvent[] = [];
  const { report, nextState } = await runAudit({
    registry: options.registry,
    ...(loaded ? { state: loaded.state } : {}),
    ...(options.logKey === undefined ? {} : { logKey: options.logKey }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.witnessPolicy === undefined ? {} : { witnessPolicy: options.witnessPolicy }),
    ...(options.nowSeconds === undefined ? {} : { nowSeconds: options.nowSeconds }),
    onEntry: (index, data) => {
      const event = describeEntry(index, data, options);
      if (event !== undefined) events.push(event);
    },
  });
  const findings = report.problems.map((p) => `${p.code}: ${p.message}`);
  const advance = report.ok && nextState !== undefined;
  for (const event of events) if (event.finding !== undefined) findings.push(`entry ${event.index}: ${event.finding}`);
  let stateWritten = false;
  if (advance && nextState !== undefined && options.stateFile !== undefined)
    stateWritten = await writeAuditStateFile(options.stateFile, nextState, loaded?.text);
  return { events: events.sort((a, b) => a.index - b.index), findings, audit: report, stateWritten };
}

/** One line per event: `<index> <kind> <subject|kid> ...`, a finding marked. */
export function formatMonitorEvent(event: MonitorEvent): string {
  const parts = [String(event.index), event.kind];
  if (event.subject !== undefined) parts.push(event.subject);
  if (event.digest !== undefined) parts.push(event.digest);
  if (event.kid !== undefined) parts.push(`kid=${event.kid}`);
  if (event.publisher !== undefined) parts.push(`publisher=${event.publisher}`);
  if (event.reason !== undefined) parts.push(`reason=${JSON.stringify(event.reason)}`);
  if (event.finding !== undefined) parts.push(`FINDING: ${event.finding}`);
  return parts.join(' ');
}

function concerns(subject: string, namespace: string): boolean {
  return subject.startsWith(`${namespace}/`);
}

function describeEntry(index: number, data: Uint8Array, options: MonitorOptions): MonitorEvent | undefined {
  const parsed = parseLogEntry(data);
  if (!parsed.ok) return undefined; // the audit reports malformed entries
  if (parsed.kind === 'key') return { index, kind: 'key', kid: parsed.entry.kid };
  if (parsed.kind === 'yank') {
    if (!concerns(parsed.entry.subject, options.namespace)) return undefined;
    const { subject, digest, reason } = parsed.entry;
    return { index, kind: 'yank', subject, digest, reason };
  }
  if (parsed.kind !== 'attestation') return undefined;
  const facts = readAttestation(data);
  if (facts === undefined || !concerns(facts.subject, options.namespace)) return undefined;
  const event: MonitorEvent = { index, kind: 'publish', ...facts };
  const why: string[] = [];
  if (options.expectKid !== undefined && facts.kid !== options.expectKid)
    why.push(`signed with key ${facts.kid ?? '(none)'}, expected ${options.expectKid}`);
  if (options.expectPublisher !== undefined && facts.publisher !== options.expectPublisher)
    why.push(`publisher ${facts.publisher ?? '(none)'}, expected ${options.expectPublisher}`);
  if (why.length > 0) event.finding = why.join('; ');
  return event;
}

/** The subject, digest, publisher and kid an attestation entry states (its signature is the audit's to check). */
function readAttestation(
  data: Uint8Array,
): { subject: string; digest?: string; publisher?: string; kid?: string } | undefined {
  const jws = readJson(data);
  if (!isJsonObject(jws) || typeof jws['payload'] !== 'string' || typeof jws['protected'] !== 'string')
    return undefined;
  const header = readJson(Buffer.from(jws['protected'], 'base64url'));
  const statement = readJson(Buffer.from(jws['payload'], 'base64url'));
  if (!isJsonObject(statement) || !Array.isArray(statement['subject'])) return undefined;
  const first = statement['subject'][0];
  if (!isJsonObject(first) || typeof first['name'] !== 'string') return undefined;
  const digest = isJsonObject(first['digest']) ? first['digest']['sha256'] : undefined;
  const predicate = statement['predicate'];
  const publisher = isJsonObject(predicate) ? predicate['publisher'] : undefined;
  const kid = isJsonObject(header) ? header['kid'] : undefined;
  return {
    subject: first['name'],
    ...(typeof digest === 'string' ? { digest: `sha256:${digest}` } : {}),
    ...(typeof publisher === 'string' ? { publisher } : {}),
    ...(typeof kid === 'string' ? { kid } : {}),
  };
}

function readJson(bytes: Uint8Array): unknown {
  if (decodeUtf8Strict(bytes) === undefined) return undefined;
  try {
    return parseStrict(bytes, { maxBytes: 1 << 20, maxDepth: 32 }).value;
  } catch {
    return undefined;
  }
}
