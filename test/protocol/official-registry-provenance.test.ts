// Issue 28 §3: the /v0.1 ServerResponse carries the attestation's provenance under toolseal's `_meta` key (and the
// response still validates against the official OpenAPI schema); a version attested without provenance has none.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { PublishProvenance } from '../../src/attest/provenance.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import {
  formatServerResponse,
  type StoredServerVersion,
  TOOLSEAL_META_KEY,
} from '../../src/protocol/official-registry.ts';
import { expectValid, validateServerResponse } from '../helpers/official-openapi.ts';
import { repoPath } from '../helpers/pipeline-helpers.ts';

function storedVersion(provenance?: PublishProvenance): StoredServerVersion {
  const result = runPipeline(readFileSync(repoPath('test', 'fixtures', 'server-manifests', 'everything-npm.json')));
  return {
    manifest: result.manifest,
    digest: result.digest,
    status: 'active',
    publishedAt: '2026-11-30T10:00:00.000Z',
    updatedAt: '2026-11-30T10:00:00.000Z',
    isLatest: true,
    logIndex: 41,
    evidence: { attestationUrl: 'https://registry.example/a', bundleUrl: 'https://registry.example/b' },
    ...(provenance === undefined ? {} : { provenance }),
  };
}

describe('ServerResponse provenance', () => {
  it('an OIDC publish: the provenance is under dev.toolseal/signed-manifest, and the response stays valid', () => {
    const provenance: PublishProvenance = {
      method: 'oidc',
      issuer: 'https://token.actions.githubusercontent.com',
      subject: 'repo:acme/payments-mcp:ref:refs/tags/v1.0.0',
      claims: { repository: 'acme/payments-mcp', sha: '3f2a1b9c' },
    };
    const response = formatServerResponse(storedVersion(provenance));
    expect(response?._meta[TOOLSEAL_META_KEY].provenance).toEqual(provenance);
    expectValid(validateServerResponse, response);
  });

  it('no provenance recorded: no member', () => {
    const response = formatServerResponse(storedVersion());
    expect(Object.hasOwn(response?._meta[TOOLSEAL_META_KEY] ?? {}, 'provenance')).toBe(false);
  });
});
