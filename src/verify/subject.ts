// Subject stage: the signed bytes (RFC 8259 JSON) must themselves declare the attested name@version (in-toto subject).

import { ToolsealError } from '../core/errors.ts';
import { isJsonObject } from '../core/json.ts';
import type { Manifest } from '../pipeline/envelope.ts';
import { formatManifestRef } from '../protocol/manifest-ref.ts';
import { parseSignedJson } from './signed-json.ts';

/**
 * Parse the signed bytes and check they declare `attestedSubject` (`name@version`, as the verified attestation
 * names it). SUBJECT_MISMATCH when they declare another one, or are not a manifest with a name and a version.
 */
export function verifyDeclaredSubject(bytes: Uint8Array, attestedSubject: string): Manifest {
  const manifest = parseSignedManifest(bytes);
  const declared = formatManifestRef(manifest.name, manifest.version);
  if (declared !== attestedSubject) {
    throw new ToolsealError(
      'SUBJECT_MISMATCH',
      `the bytes declare ${declared} but the attestation is for ${attestedSubject}`,
    );
  }
  return manifest;
}

/** The signed bytes, parsed strictly (./signed-json.ts); SUBJECT_MISMATCH unless they hold a string name and version. */
export function parseSignedManifest(bytes: Uint8Array): Manifest {
  const value = parseSignedJson(bytes);
  if (!isJsonObject(value) || typeof value['name'] !== 'string' || typeof value['version'] !== 'string') {
    throw new ToolsealError('SUBJECT_MISMATCH', 'the signed bytes are not a manifest with a name and a version');
  }
  return value as unknown as Manifest;
}
