// The provenance record of a publish attestation (issue 28 §3): built from verified claims, read back strictly.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildOidcProvenance,
  buildTokenProvenance,
  describePublishProvenance,
  readPublishProvenance,
} from '../../src/attest/provenance.ts';
import type { JsonValue } from '../../src/core/json.ts';
import { parseStrictText } from '../../src/pipeline/parse.ts';

describe('provenance', () => {
  it('maps GitHub and GitLab claims onto the same names and ignores the rest', () => {
    const gitlab = buildOidcProvenance('https://gitlab.com', {
      sub: 'project_path:g/p:ref_type:tag:ref:v1',
      project_path: 'g/p',
      ci_config_ref_uri: 'gitlab.com/g/p//.gitlab-ci.yml@refs/tags/v1',
      sha: 'abc',
      pipeline_id: '5',
      user_email: 'someone@example.com',
      run_id: 7,
    });
    expect(gitlab).toEqual({
      method: 'oidc',
      issuer: 'https://gitlab.com',
      subject: 'project_path:g/p:ref_type:tag:ref:v1',
      claims: {
        repository: 'g/p',
        workflow_ref: 'gitlab.com/g/p//.gitlab-ci.yml@refs/tags/v1',
        sha: 'abc',
        run_id: '5',
      },
    });
    expect(buildTokenProvenance('com.example', { unverifiedNamespace: true })).toEqual({
      method: 'token',
      publisher: 'com.example',
      unverifiedNamespace: true,
    });
  });

  it('describes itself for pages', () => {
    const provenance = buildOidcProvenance('https://token.actions.githubusercontent.com', {
      sub: 's',
      repository: 'acme/payments-mcp',
      workflow_ref: 'acme/payments-mcp/.github/workflows/release.yml@refs/tags/v1',
      sha: '3f2a1b9c0d4e',
    });
    expect(describePublishProvenance(provenance)).toBe(
      'published by acme/payments-mcp, workflow release.yml at 3f2a1b9c',
    );
  });

  it('reads back exactly what was built (through JSON), and nothing with extra or mistyped members', () => {
    const text = fc.string({ maxLength: 20 });
    fc.assert(
      fc.property(
        fc.record(
          { sub: text, repository: text, workflow_ref: text, sha: text, run_id: text, environment: text },
          {
            requiredKeys: ['sub'],
          },
        ),
        fc.boolean(),
        (claims, unverified) => {
          const built = buildOidcProvenance('https://issuer.example', claims, { unverifiedNamespace: unverified });
          const reparsed = parseStrictText(JSON.stringify(built)) as JsonValue;
          expect(readPublishProvenance(reparsed)).toEqual(built);
        },
      ),
    );
    for (const bad of [
      { method: 'token', publisher: 'x', extra: 1 },
      { method: 'token', publisher: 1 },
      { method: 'token', publisher: 'x', unverifiedNamespace: false },
      { method: 'oidc', issuer: 'i', subject: 's', claims: { repository: 1 } },
      { method: 'oidc', issuer: 'i', subject: 's', claims: { ref: 'x' } },
      { method: 'oidc', issuer: 'i', claims: {} },
      { method: 'sigstore' },
      null,
    ]) {
      expect(readPublishProvenance(bad as JsonValue)).toBeUndefined();
    }
  });
});
