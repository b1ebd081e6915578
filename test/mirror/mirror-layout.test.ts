// The mirror's file layout: each read route's file, folder routes in index.json, decoded segments, and refusals
// of anything that could leave the mirror folder.

import { describe, expect, it } from 'vitest';
import { isTileFile, mirrorFileOf } from '../../src/mirror/mirror-layout.ts';
import {
  attestationPath,
  attestationsByDigestPath,
  blobPath,
  entryBundlePath,
  manifestPath,
  ROUTES,
  versionPath,
} from '../../src/protocol/routes.ts';

const DIGEST = `sha256:${'ab'.repeat(32)}`;

describe('mirrorFileOf', () => {
  it.each([
    [ROUTES.jwks, '.well-known/jwks.json'],
    [ROUTES.logKey, 'v1/log/key'],
    [ROUTES.logCheckpoint, 'v1/log/checkpoint'],
    [entryBundlePath(1234, 17), 'v1/log/tile/entries/x001/234.p/17'],
    [ROUTES.manifests, 'v1/manifests/index.json'],
    [manifestPath('io.github.acme/widgets'), 'v1/manifests/io.github.acme/widgets/index.json'],
    [versionPath('io.github.acme/widgets', '1.0.0'), 'v1/manifests/io.github.acme/widgets/1.0.0/index.json'],
    [
      versionPath('io.github.acme/widgets', '2.0.0-rc.1+b.5'),
      'v1/manifests/io.github.acme/widgets/2.0.0-rc.1+b.5/index.json',
    ],
    [attestationPath('io.github.acme/widgets', '1.0.0'), 'v1/manifests/io.github.acme/widgets/1.0.0/attestation'],
    [blobPath(DIGEST), `v1/blobs/${DIGEST}`],
    [attestationsByDigestPath(DIGEST), `v1/attestations/${DIGEST}`],
  ])('%s is the file %s', (path, file) => {
    expect(mirrorFileOf(path)).toBe(file);
  });

  it.each([
    '/v1/manifests/io.github.acme/%2e%2e',
    '/v1/manifests/../../etc/passwd',
    '/v1/manifests/a%2Fb/c',
    '/v1//x',
    '/v1/.toolseal-mirror.json',
    '/v1/log/proof/inclusion?index=1&size=2',
    'relative/path',
    '/v1/%E0%A4%A',
  ])('refuses %s', (path) => {
    expect(() => mirrorFileOf(path)).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
  });

  it('tiles and entry bundles (only) get .gz siblings', () => {
    expect(isTileFile(mirrorFileOf(entryBundlePath(0, 3)))).toBe(true);
    expect(isTileFile(mirrorFileOf(ROUTES.logCheckpoint))).toBe(false);
  });
});
