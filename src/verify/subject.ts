// Subject stage: the signed bytes (RFC 8259 JSON) must themselves declare the attested name@version (in-toto subject).

import { ToolsealError } from '../core/errors.ts';
import { isJsonObject } from '../core/json.ts';
import type { Manifest } from '../pipeline/envelope.ts';
import { formatManifestRef } from '../protocol/manifest-ref.ts';
import { parseSignedJson } from './signed-json.ts';
import { scanDeclaredSubject } from './subject-scan.ts';

/** The name@version the signed bytes declare, once checked against the attestation, and the bytes parsed. */
export class DeclaredManifest {
  constructor(
    readonly name: string,
    readonly version: string,
    private readonly bytes: Uint8Array,
    private parsed: Manifest | undefined,
  ) {}

  /** The bytes parsed strictly: on the first call when the scan already showed the strict parser accepts them. */
  readManifest(): Manifest {
    this.parsed ??= parseSignedManifest(this.bytes);
    return this.parsed;
  }
}

/**
 * Parse the signed bytes and check they declare `attestedSubject` (`name@version`, as the verified attestation
 * names it). SUBJECT_MISMATCH when they declare another one, or are not a manifest with a name and a version.
 */
export function verifyDeclaredSubject(bytes: Uint8Array, attestedSubject: string): Manifest {
  return checkDeclaredSubject(bytes, attestedSubject).readManifest();
}

/**
 * verifyDeclaredSubject, refusing exactly the same bytes with the same errors, without building the parsed tree:
 * scanDeclaredSubject (./subject-scan.ts) reads the declared name and version of the bytes it can show the strict
 * parser accepts; any other bytes are parsed strictly here, which decides and names the error.
 */
export function checkDeclaredSubject(bytes: Uint8Array, attestedSubject: string): DeclaredManifest {
  const scanned = scanDeclaredSubject(bytes);
  let declared: DeclaredManifest;
  if (scanned === undefined) {
    const manifest = parseSignedManifest(bytes);
    declared = new DeclaredManifest(manifest.name, manifest.version, bytes, manifest);
  } else {
    declared = new DeclaredManifest(scanned.name, scanned.version, bytes, undefined);
  }
  const ref = formatManifestRef(declared.name, declared.version);
  if (ref !== attestedSubject) {
    throw new ToolsealError(
      'SUBJECT_MISMATCH',
      `the bytes declare ${ref} but the attestation is for ${attestedSubject}`,
    );
  }
  return declared;
}

/** The signed bytes, parsed strictly (./signed-json.ts); SUBJECT_MISMATCH unless they hold a string name and version. */
export function parseSignedManifest(bytes: Uint8Array): Manifest {
  const value = parseSignedJson(bytes);
  if (!isJsonObject(value) || typeof value['name'] !== 'string' || typeof value['version'] !== 'string') {
    throw new ToolsealError('SUBJECT_MISMATCH', 'the signed bytes are not a manifest with a name and a version');
  }
  return value as unknown as Manifest;
}
