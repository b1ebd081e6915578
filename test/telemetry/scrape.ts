// Test helper: scrape a metrics listener over HTTP and read samples out of the parsed text format.

import parsePrometheusTextFormat, { type ParsedFamily, type ParsedSample } from 'parse-prometheus-text-format';

export async function scrape(url: string): Promise<ParsedFamily[]> {
  return parsePrometheusTextFormat(await scrapeText(url));
}

/** The raw exposition text, after checking the status and the text format's Content-Type. */
export async function scrapeText(url: string): Promise<string> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`scrape answered ${response.status}`);
  if (!response.headers.get('content-type')?.startsWith('text/plain; version=0.0.4')) {
    throw new Error(`unexpected content-type ${response.headers.get('content-type')}`);
  }
  return response.text();
}

export function findFamily(families: ParsedFamily[], name: string): ParsedFamily | undefined {
  return families.find((family) => family.name === name);
}

function matches(sample: ParsedSample, labels: Record<string, string>): boolean {
  const own = sample.labels ?? {};
  return (
    Object.keys(labels).length === Object.keys(own).length && Object.entries(labels).every(([k, v]) => own[k] === v)
  );
}

/** The value of the sample with exactly these labels (counters, gauges), or undefined when absent. */
export function readValue(
  families: ParsedFamily[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const sample = findFamily(families, name)?.metrics.find((s) => matches(s, labels));
  return sample?.value === undefined ? undefined : Number(sample.value);
}

/** An unlabelled histogram's count, or undefined when absent. */
export function readCount(families: ParsedFamily[], name: string): number | undefined {
  const sample = findFamily(families, name)?.metrics.find((s) => matches(s, {}));
  return sample?.count === undefined ? undefined : Number(sample.count);
}

/**
 * A labelled histogram's `_count` sample, read from the raw text: parse-prometheus-text-format 1.1.1 merges the
 * series of a labelled histogram and drops their labels, count and sum (prom-client writes `le` first). Only for
 * one label, whose value the caller chose (no escaping).
 */
export function readLabelledCount(text: string, name: string, label: string, value: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}_count{${label}="${value}"} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
