// The publish pipeline: strict parse → envelope → inline refs → names → hidden characters → canonicalise → digest,
// all pure.

import type { JsonObject, JsonValue } from '../core/json.ts';
import { parseStrict, defaultParseLimits, type ParseLimits } from './parse.ts';
import { checkEnvelope, type Manifest } from './envelope.ts';
import { inlineSchemaRefs, defaultRefLimits, type RefLimits } from './refs.ts';
import { assertNfcStable, normaliseToolNames, type RenamedTool } from './names.ts';
import { computeDigest, type Sha256Digest } from '../core/digest.ts';
import { canonicalizeToBytes } from './canonical.ts';
import { assertNoHiddenCharacters } from './hidden-characters.ts';

export type { JsonObject, JsonValue } from '../core/json.ts';
export type { Manifest, ManifestTool } from './envelope.ts';
export type * from './server-member.ts';
export type { RenamedTool } from './names.ts';
export type { Sha256Digest } from '../core/digest.ts';
export type { ParseLimits } from './parse.ts';
export type { RefLimits } from './refs.ts';
export { parseStrict, parseStrictText, defaultParseLimits } from './parse.ts';
export { SIGNED_MANIFEST_PARSE_LIMITS } from './limits.ts';
export { checkEnvelope, manifestSchemaV1 } from './envelope.ts';
export { inlineSchemaRefs, defaultRefLimits } from './refs.ts';
export { normaliseToolNames, assertNfcStable } from './names.ts';
export { assertNoHiddenCharacters, assertNoHiddenCharactersInServer } from './hidden-characters.ts';
export {
  checkServerMember,
  composeServerDetail,
  deriveServerDescription,
  officialServerSchema,
  SERVER_JSON_SCHEMA_URL,
  SERVER_DESCRIPTION_MAX,
} from './server-member.ts';
export { computeSkeleton } from './confusables.ts';
export { canonicalizeToBytes, canonicalizeToText } from './canonical.ts';
export { computeDigest, computeSha256Hex, isSha256Digest } from '../core/digest.ts';

/** Bump when any stage's policy changes what bytes a manifest turns into. Recorded in attestations. */
export const PIPELINE_POLICY_VERSION = 'toolseal-pipeline/v1';

export type PipelineLimits = ParseLimits & RefLimits;

export const defaultPipelineLimits: PipelineLimits = { ...defaultParseLimits, ...defaultRefLimits };

export interface PipelineResult {
  /** Manifest name (`namespace/name`), validated, never rewritten. */
  name: string;
  version: string;
  /** The normalised manifest: refs inlined, tool names NFC. Parsing `canonicalBytes` gives this value. */
  manifest: Manifest;
  /** The exact bytes that are signed, stored and served (JCS, UTF-8). */
  canonicalBytes: Uint8Array;
  digest: Sha256Digest;
  size: number;
  renamedTools: RenamedTool[];
}

/** Run every stage over the bytes a vendor uploaded. Throws ToolsealError on the first refusal. */
export function runPipeline(bytes: Uint8Array, limits: Partial<PipelineLimits> = {}): PipelineResult {
  const effective: PipelineLimits = { ...defaultPipelineLimits, ...limits };
  const parsed = parseStrict(bytes, effective);
  const manifest = checkEnvelope(parsed);

  let tools = manifest.tools;
  if (parsed.hasRefKeyword) {
    const budget = { remaining: effective.maxExpandedSize };
    tools = tools.map((tool, index) => {
      const inputSchema = inlineSchemaRefs(
        tool.inputSchema as JsonValue,
        ['tools', index, 'inputSchema'],
        3,
        budget,
        effective,
      );
      const outputSchema =
        tool.outputSchema === undefined
          ? undefined
          : inlineSchemaRefs(tool.outputSchema as JsonValue, ['tools', index, 'outputSchema'], 3, budget, effective);
      if (inputSchema === tool.inputSchema && outputSchema === tool.outputSchema) return tool;
      const copy = { ...tool, inputSchema } as typeof tool;
      if (outputSchema !== undefined) (copy as { outputSchema?: unknown }).outputSchema = outputSchema;
      return copy;
    });
  }

  if (parsed.hasNonLatinText) assertNfcStable(manifest as unknown as JsonObject);
  const named = normaliseToolNames(tools);
  assertNoHiddenCharacters(
    parsed.value,
    named.tools.map((tool) => tool.name),
    parsed.hasNonLatinText,
  );
  const normalised: Manifest = named.tools === manifest.tools ? manifest : { ...manifest, tools: named.tools };

  const canonicalBytes = canonicalizeToBytes(normalised as unknown as JsonValue);
  return {
    name: manifest.name,
    version: manifest.version,
    manifest: normalised,
    canonicalBytes,
    digest: computeDigest(canonicalBytes),
    size: canonicalBytes.byteLength,
    renamedTools: named.renamedTools,
  };
}
