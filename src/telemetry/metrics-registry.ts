// One Prometheus registry per listener, and the label bound every metric set uses (Prometheus "Instrumentation":
// "do not use labels to store dimensions with high cardinality"). Callers outside src/telemetry never see prom-client.

import { Registry } from 'prom-client';

/** A set of metrics served by one listener; opaque outside src/telemetry. */
export interface MetricsRegistry {
  /** prom-client's registry: only src/telemetry uses it. */
  readonly promRegistry: Registry;
  /** The text exposition format (version 0.0.4) of every metric in the registry. */
  render(): Promise<string>;
  /** The Content-Type of `render()`'s text. */
  readonly contentType: string;
}

/** A new, empty metrics registry (no process metrics: the listener serves only what toolseal records). */
export function createMetricsRegistry(): MetricsRegistry {
  const promRegistry = new Registry();
  return {
    promRegistry,
    render: () => promRegistry.metrics(),
    contentType: promRegistry.contentType,
  };
}

/** Label values are short printable ASCII; anything else is never a label. */
const LABEL_VALUE_PATTERN = /^[\x21-\x7e]{1,128}$/;
export const OTHER_LABEL = 'other';

/**
 * A bound on one label's values: the first `max` distinct acceptable values keep their name, every later one (and
 * every value that is not short printable ASCII) is `other`, so a caller's mistake cannot grow the series unbounded.
 */
export function createLabelBound(max: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= max || !LABEL_VALUE_PATTERN.test(value)) return OTHER_LABEL;
    seen.add(value);
    return value;
  };
}
