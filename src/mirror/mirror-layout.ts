// The static mirror's file layout (issue 16 §3): each read route of src/protocol/routes.ts as a file under the
// mirror folder, so a static server (docs/deploy.md: nginx `try_files $uri $uri/index.json =404`) answers the API.

import { ToolsealError } from '../core/errors.ts';

/** The mirror's own state (not served: a static server refuses every path with a segment starting with a dot). */
export const MIRROR_STATE_FILE = '.toolseal-mirror.json';

/** The problem+json a static server answers for every path the mirror has no file for (nginx `error_page 404`). */
export const NOT_FOUND_PAGE = '/_mirror/404.json';

/**
 * Routes that are both a resource and a folder of others: the listing `/v1/manifests`, a manifest's versions
 * `/v1/manifests/{ns}/{name}` (its versions are below it) and a version's bytes (its attestation is below it).
 * Their body is the file `index.json` inside the folder; a version is never `index.json` (not SemVer).
 */
const FOLDER_ROUTES = /^\/v1\/manifests(?:\/[^/]+\/[^/]+(?:\/[^/]+)?)?$/;

/**
 * The file (relative to the mirror folder, `/`-separated) that holds the answer of GET `apiPath` (a URL path,
 * percent-encoded as the routes build it; no query). Each segment is decoded as a static server decodes it;
 * an empty, dot-led or separator-holding segment is refused (BAD_REQUEST): nothing leaves the folder.
 */
export function mirrorFileOf(apiPath: string): string {
  if (!apiPath.startsWith('/') || apiPath.includes('?') || apiPath.includes('#')) {
    throw new ToolsealError('BAD_REQUEST', `not a mirrored path: ${JSON.stringify(apiPath)}`);
  }
  const segments = apiPath
    .slice(1)
    .split('/')
    .map((segment) => decodeSegment(segment, apiPath));
  const file = segments.join('/');
  return FOLDER_ROUTES.test(apiPath) ? `${file}/index.json` : file;
}

function decodeSegment(segment: string, apiPath: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    decoded = '';
  }
  const allowedDot = decoded === '.well-known';
  if (decoded === '' || (decoded.startsWith('.') && !allowedDot) || /[/\\\0]/.test(decoded)) {
    throw new ToolsealError('BAD_REQUEST', `not a mirrored path: ${JSON.stringify(apiPath)}`);
  }
  return decoded;
}

/** Is `file` (as mirrorFileOf returns it) a tile or an entry bundle, which the mirror also writes as `file.gz`? */
export function isTileFile(file: string): boolean {
  return file.startsWith('v1/log/tile/');
}
