// Parse limits (RFC 8259 grammar, RFC 7493 I-JSON) for bytes that already passed the publish pipeline.

import type { ParseLimits } from './parse.ts';

/**
 * For re-parsing signed manifest bytes: they passed the pipeline (and the transport bounded their size), and
 * inlined `$ref`s may nest deeper than an upload may, hence no size limit and a generous depth.
 */
export const SIGNED_MANIFEST_PARSE_LIMITS: Readonly<ParseLimits> = Object.freeze({
  maxBytes: Number.MAX_SAFE_INTEGER,
  maxDepth: 1000,
});
