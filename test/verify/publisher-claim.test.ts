// The publisher-claim stage on statements built here (issue 28 §3): exact claims pass, anything else PUBLISHER_MISMATCH.

import { describe, expect, it } from 'vitest';
import { buildOidcProvenance, buildTokenProvenance } from '../../src/attest/provenance.ts';
import { buildPublishStatement } from '../../src/attest/statement.ts';
import { computeDigest } from '../../src/core/digest.ts';
import { ToolsealError } from '../../src/core/errors.ts';
import type { JsonValue } from '../../src/core/json.ts';
import { parseStrictText } from '../../src/pipeline/parse.ts';
import { expectPublisherClaim, parsePublisherClaimArgument } from '../../src/verify/publisher-claim.ts';

const oidc = buildOidcProvenance('https://token.actions.githubusercontent.com', {
  sub: 'repo:acme/payments-mcp:environment:release',
  repository: 'acme/payments-mcp',
  workflow_ref: 'acme/payments-mcp/.github/workflows/release.yml@refs/tags/v1.0.0',
  sha: '3f2a1b9c0d4e5f60718293a4b5c6d7e8f9012345',
  run_id: '17',
  environment: 'release',
  repository_owner: 'acme',
});

/** A statement's predicate as a host reads it back: built, serialised and strictly parsed. */
function predicateWith(provenance: unknown): JsonValue | undefined {
  const statement = buildPublishStatement({
    name: 'io.github.acme/payments',
    version: '1.0.0',
    digest: computeDigest(new Uint8Array([1])),
    predicate: {
      registry: 'http://127.0.0.1:8787',
      publisher: 'io.github.acme',
      storedAt: '2026-12-01T00:00:00.000Z',
      policy: 'v1',
      size: 1,
      previousDigest: null,
      ...(provenance === undefined ? {} : { provenance }),
    } as never,
  });
  const parsed = parseStrictText(JSON.stringify(statement));
  return (parsed as { predicate: JsonValue }).predicate;
}

function mismatch(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ToolsealError);
    expect((error as ToolsealError).code).toBe('PUBLISHER_MISMATCH');
    return (error as ToolsealError).message;
  }
  throw new Error('expected PUBLISHER_MISMATCH');
}

describe('expectPublisherClaim', () => {
  it('passes when every expected claim is there exactly, and returns the provenance', () => {
    const expected = parsePublisherClaimArgument(
      'environment=release',
      parsePublisherClaimArgument('repository=acme/payments-mcp'),
    );
    expect(expectPublisherClaim(predicateWith(oidc), expected)).toEqual(oidc);
    expect(
      expectPublisherClaim(predicateWith(oidc), {
        issuer: 'https://token.actions.githubusercontent.com',
        method: 'oidc',
      }),
    ).toEqual(oidc);
  });

  it('refuses another repository, a prefix, another case, an absent claim', () => {
    for (const repository of ['acme/payments', 'acme/payments-mcp-evil', 'Acme/payments-mcp', 'mallory/payments-mcp']) {
      mismatch(() => expectPublisherClaim(predicateWith(oidc), { repository }));
    }
    const bare = buildOidcProvenance('https://gitlab.com', {
      sub: 'project_path:g/p:ref_type:tag:ref:v1',
      project_path: 'g/p',
    });
    expect(mismatch(() => expectPublisherClaim(predicateWith(bare), { environment: 'release' }))).toContain(
      'has no environment',
    );
  });

  it('refuses a statement without provenance, with malformed provenance, or with token provenance for OIDC claims', () => {
    mismatch(() => expectPublisherClaim(predicateWith(undefined), { repository: 'acme/payments-mcp' }));
    mismatch(() => expectPublisherClaim(predicateWith({ method: 'oidc', issuer: 'x' }), { issuer: 'x' }));
    mismatch(() =>
      expectPublisherClaim(predicateWith({ ...oidc, claims: { repository: 'acme/payments-mcp', extra: 'x' } }), {
        repository: 'acme/payments-mcp',
      }),
    );
    const token = buildTokenProvenance('io.github.acme');
    expect(expectPublisherClaim(predicateWith(token), { publisher: 'io.github.acme' })).toEqual(token);
    mismatch(() => expectPublisherClaim(predicateWith(token), { repository: 'acme/payments-mcp' }));
  });

  it('parses NAME=VALUE and refuses unknown names and repeats', () => {
    expect(parsePublisherClaimArgument('workflow_ref=a/b/.github/workflows/x.yml@refs/tags/v=1')).toEqual({
      workflow_ref: 'a/b/.github/workflows/x.yml@refs/tags/v=1',
    });
    for (const bad of ['repository', '=x', 'repo=acme/x', 'aud=x']) {
      expect(() => parsePublisherClaimArgument(bad)).toThrow(ToolsealError);
    }
    expect(() => parsePublisherClaimArgument('sha=1', { sha: '2' })).toThrow('given twice');
  });
});
