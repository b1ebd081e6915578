// References to manifests: `namespace/name@version` (an exact SemVer 2.0.0 version, never a range or `latest`)
// or `sha256:<hex>`. The name grammar is the manifest format's (docs/manifest-format.md): reverse-DNS namespace.

import { isSha256Digest, type Sha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';

export type ManifestRef = { kind: 'version'; name: string; version: string } | { kind: 'digest'; digest: Sha256Digest };

/** A reverse-DNS namespace in lowercase ASCII, e.g. `io.github.acme`. */
export const NAMESPACE_PATTERN = /^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
const NAME_PATTERN =
  /^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+\/[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$/;
/** SemVer 2.0.0 §2, §9, §10 (the regular expression the specification suggests). */
const VERSION_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** Whether `name` is a manifest name (`namespace/name`, the manifest format's grammar). */
export function isManifestName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

/** `name@version`: the subject of an attestation, a lockfile key, what a log entry names. */
export function formatManifestRef(name: string, version: string): string {
  return `${name}@${version}`;
}

/** Parse `namespace/name@version` or `sha256:<hex>`; BAD_REQUEST otherwise. */
export function parseManifestRef(ref: string): ManifestRef {
  if (typeof ref !== 'string') throw new ToolsealError('BAD_REQUEST', 'a manifest reference must be a string');
  if (ref.startsWith('sha256:')) {
    if (!isSha256Digest(ref)) {
      throw new ToolsealError('BAD_REQUEST', `${JSON.stringify(ref)} is not sha256:<64 lowercase hex>`);
    }
    return { kind: 'digest', digest: ref };
  }
  const at = ref.lastIndexOf('@');
  const name = at < 0 ? ref : ref.slice(0, at);
  const version = at < 0 ? '' : ref.slice(at + 1);
  if (!NAME_PATTERN.test(name)) {
    throw new ToolsealError('BAD_REQUEST', `${JSON.stringify(name)} is not a manifest name (namespace/name)`);
  }
  if (!VERSION_PATTERN.test(version)) {
    throw new ToolsealError(
      'BAD_REQUEST',
      `${JSON.stringify(ref)} must name an exact version: NAME@MAJOR.MINOR.PATCH (not a range or "latest")`,
    );
  }
  return { kind: 'version', name, version };
}
