// The web pages' paths (issue "A web page for the registry": `/`, `/ui/manifests/…`, `/ui/diff/…`, `/ui/log`;
// issue 13: `/ui/approvals/…`), built
// once so links and routes cannot drift. Each segment is percent-encoded (RFC 3986 §2.1); the router decodes it.

export const PAGE_ROUTES = {
  home: '/',
  manifest: '/ui/manifests/:namespace/:name',
  version: '/ui/manifests/:namespace/:name/:version',
  compare: '/ui/diff/:namespace/:name',
  diff: '/ui/diff/:namespace/:name/:from/:to',
  log: '/ui/log',
  approvals: '/ui/approvals',
  approval: '/ui/approvals/:id',
  asset: '/ui/assets/:file',
} as const;

function encodeName(name: string): string {
  return name.split('/').map(encodeURIComponent).join('/');
}

export function manifestPagePath(name: string): string {
  return `/ui/manifests/${encodeName(name)}`;
}

export function versionPagePath(name: string, version: string): string {
  return `${manifestPagePath(name)}/${encodeURIComponent(version)}`;
}

export function comparePath(name: string): string {
  return `/ui/diff/${encodeName(name)}`;
}

export function diffPagePath(name: string, from: string, to: string): string {
  return `${comparePath(name)}/${encodeURIComponent(from)}/${encodeURIComponent(to)}`;
}

export function assetPath(file: string): string {
  return `/ui/assets/${file}`;
}
