// What a manifest build reads (docs/manifest-format.md, README "Schemas split across files"): the manifest, the
// schema files under the root and, with --allow-http, https documents; the one interface the bundler sees them by.

import { ToolsealError, type ErrorCode } from '../core/errors.ts';
import type { JsonValue } from '../core/json.ts';
import { truncateText } from '../core/text.ts';

export type DocumentKind = 'file' | 'https';

/** One document a build may read. Created only by a DocumentSource, after its checks passed. */
export interface DocumentRef {
  /** Unique key: the file's real path as a `file:` URL, or the `https:` URL without its fragment. */
  readonly id: string;
  readonly kind: DocumentKind;
  /** The base that relative refs written inside this document resolve against. */
  readonly url: URL;
  /** How messages name it: the path relative to the root (`/` separators), or the URL. */
  readonly label: string;
}

/** Where a ref was met, for refusals: the manifest pointer that led there, and the place inside a schema file. */
export interface RefSite {
  /** JSON pointer (RFC 6901) into the manifest: the `$ref` there, or the one whose target holds the problem. */
  readonly pointer: string | undefined;
  /** `schemas/a.json at /properties/x/$ref` when the ref sits in a schema file rather than in the manifest. */
  readonly where?: string;
}

export interface DocumentSource {
  /** The document a non-local ref written in `from` names (fragment ignored); refuses what the build may not read. */
  resolve(ref: string, from: DocumentRef, site: RefSite): Promise<DocumentRef>;
  /** The document's value, strictly parsed; read once per build. */
  load(doc: DocumentRef, site: RefSite): Promise<JsonValue>;
}

/** Limits of one build. Files and https documents share the size limit. */
export interface BuildLimits {
  /** Largest schema file or https document, in bytes (the manifest's own limit is the pipeline's). */
  maxDocumentBytes: number;
  /** Most documents one build reads (the manifest included). */
  maxDocuments: number;
  /** Whole time one https document may take, connection to last byte, in milliseconds. */
  httpTimeoutMs: number;
  /** Most distinct ref targets copied into one tool schema. */
  maxTargetsPerSchema: number;
  /** Largest total size (UTF-16 units of compact JSON) of everything copied into the manifest's `$defs`. */
  maxBundledSize: number;
}

export const defaultBuildLimits: BuildLimits = {
  maxDocumentBytes: 1024 * 1024,
  maxDocuments: 1000,
  httpTimeoutMs: 10_000,
  maxTargetsPerSchema: 1000,
  maxBundledSize: 4 * 1024 * 1024,
};

/** A refusal at `site`: the message names the schema file and its pointer when the ref is not in the manifest. */
export function refuseAt(code: ErrorCode, site: RefSite, message: string, cause?: unknown): ToolsealError {
  const text = site.where === undefined ? message : `${message} (in ${site.where})`;
  return new ToolsealError(code, text, { ...(site.pointer === undefined ? {} : { pointer: site.pointer }), cause });
}

/** A ref as messages quote it: cut to 80 characters, any `user:password@` in it replaced (never echo credentials). */
export function quoteRef(ref: string): string {
  return JSON.stringify(truncateText(ref.replace(/\/\/[^/?#@]*@/, '//***@'), 80));
}
