// The answer of GET /v1/attestations/{digest} (BindingsResponse, src/protocol/wire.ts), read defensively.

import type { JsonValue } from '../core/json.ts';
import { isJsonObject } from '../core/json.ts';
import { ToolsealError } from '../core/errors.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
import { formatManifestRef } from '../protocol/manifest-ref.ts';
import type { BindingDto, BindingsResponse, InclusionProofDto } from '../protocol/wire.ts';
import type { InclusionEvidence } from './log-evidence.ts';

/** One name@version the registry binds to a digest, as far as it could be read (nothing here is trusted yet). */
export interface Binding {
  name: string;
  version: string;
  status: string | undefined;
  /** The publisher's reason when the status is `yanked` (reported by the registry, not proven). */
  yankReason: string | undefined;
  logIndex: number | undefined;
  /** The JCS bytes of the served JWS: the bytes that were logged. */
  attestation: Uint8Array | undefined;
  inclusion: InclusionEvidence | undefined;
}

/** A wire DTO as received: any member may be missing or of any JSON type. */
type Received<T> = { [K in keyof T]?: JsonValue };

/**
 * The bindings of a BindingsResponse. FETCH_FAILED unless it is `{"bindings": [...]}`; an item without a string
 * name and version is skipped, a member of the wrong type is left undefined (the verification then refuses).
 */
export function parseBindings(value: JsonValue): Binding[] {
  const items = isJsonObject(value) ? (value as Received<BindingsResponse>).bindings : undefined;
  if (!Array.isArray(items)) {
    throw new ToolsealError('FETCH_FAILED', 'the attestations response is not {"bindings": [...]}');
  }
  const bindings: Binding[] = [];
  for (const item of items) {
    if (!isJsonObject(item)) continue;
    const { name, version, status, yankReason, logIndex, attestation, inclusionProof } = item as Received<BindingDto>;
    if (typeof name !== 'string' || typeof version !== 'string') continue;
    bindings.push({
      name,
      version,
      status: typeof status === 'string' ? status : undefined,
      yankReason: typeof yankReason === 'string' ? yankReason : undefined,
      logIndex: typeof logIndex === 'number' ? logIndex : undefined,
      // Logged attestations are JCS; re-serialising the served JSON with JCS gives the logged bytes back.
      attestation: isJsonObject(attestation) ? canonicalizeToBytes(attestation) : undefined,
      inclusion: readInclusionProof(inclusionProof),
    });
  }
  return bindings;
}

function readInclusionProof(value: JsonValue | undefined): InclusionEvidence | undefined {
  if (!isJsonObject(value)) return undefined;
  const { index, size, hashes, checkpoint } = value as Received<InclusionProofDto>;
  if (typeof index !== 'number' || !Array.isArray(hashes) || typeof checkpoint !== 'string') return undefined;
  if (!hashes.every((hash): hash is string => typeof hash === 'string')) return undefined;
  return typeof size === 'number' ? { index, size, hashes, checkpoint } : { index, hashes, checkpoint };
}

/** The binding for exactly `name@version`, if any. */
export function findBinding(bindings: readonly Binding[], name: string, version: string): Binding | undefined {
  return bindings.find((binding) => binding.name === name && binding.version === version);
}

/**
 * The one binding of `digest`, or the one `wanted` (`namespace/name` or `namespace/name@version`) selects.
 * NOT_FOUND when none is left; BAD_REQUEST when several are.
 */
export function selectBinding(bindings: readonly Binding[], digest: string, wanted: string | undefined): Binding {
  let candidates = bindings;
  if (wanted !== undefined) {
    const at = wanted.lastIndexOf('@');
    const name = at < 0 ? wanted : wanted.slice(0, at);
    const version = at < 0 ? undefined : wanted.slice(at + 1);
    candidates = bindings.filter((b) => b.name === name && (version === undefined || b.version === version));
  }
  const only = candidates[0];
  if (only === undefined) {
    throw new ToolsealError(
      'NOT_FOUND',
      wanted === undefined ? `no attestation covers ${digest}` : `no attestation binds ${digest} to ${wanted}`,
    );
  }
  if (candidates.length > 1) {
    const list = candidates.map((b) => formatManifestRef(b.name, b.version)).join(', ');
    throw new ToolsealError(
      'BAD_REQUEST',
      `${digest} is bound to several name@versions (${list}); say which with options.name`,
    );
  }
  return only;
}
