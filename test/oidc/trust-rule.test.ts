// Trust rules and their GitHub/GitLab shorthands (issue 28 §1).

import { describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import {
  buildGithubTrustRule,
  buildGitlabTrustRule,
  GITHUB_ACTIONS_ISSUER,
  parseClaimArgument,
  type TrustRule,
  validateTrustRule,
} from '../../src/oidc/trust-rule.ts';

const base = {
  issuer: 'https://token.actions.githubusercontent.com',
  audience: 'https://registry.example',
  claims: { repository: 'acme/x' },
  refClaims: {},
  oidcOnly: false,
};

describe('--github and --gitlab shorthands', () => {
  it('pin repository, numeric owner id, workflow file and environment the npm/PyPI way', () => {
    expect(
      buildGithubTrustRule({
        repository: 'Acme/payments-mcp',
        ownerId: '4242',
        workflow: 'release.yml',
        environment: 'release',
        audience: 'https://registry.example',
        oidcOnly: true,
      }),
    ).toEqual({
      issuer: GITHUB_ACTIONS_ISSUER,
      audience: 'https://registry.example',
      claims: { repository: 'Acme/payments-mcp', repository_owner_id: '4242', environment: 'release' },
      refClaims: { workflow_ref: 'Acme/payments-mcp/.github/workflows/release.yml' },
      oidcOnly: true,
    });
  });

  it('GitLab: project path, project id and the CI file on its host', () => {
    expect(buildGitlabTrustRule({ projectPath: 'grp/sub/proj', projectId: '77', audience: 'aud' })).toEqual({
      issuer: 'https://gitlab.com',
      audience: 'aud',
      claims: { project_path: 'grp/sub/proj', project_id: '77' },
      refClaims: { ci_config_ref_uri: 'gitlab.com/grp/sub/proj//.gitlab-ci.yml' },
      oidcOnly: false,
    });
    expect(
      buildGitlabTrustRule({ projectPath: 'g/p', projectId: '1', issuer: 'https://git.example.org', audience: 'a' })
        .refClaims.ci_config_ref_uri,
    ).toBe('git.example.org/g/p//.gitlab-ci.yml');
  });

  it('refuse a missing or non-numeric owner id, a bad repository or workflow', () => {
    const ok = { repository: 'acme/x', ownerId: '1', audience: 'a' };
    for (const bad of [
      { ...ok, ownerId: '' },
      { ...ok, ownerId: 'acme' },
      { ...ok, ownerId: '01' },
      { ...ok, repository: 'acme' },
      { ...ok, repository: 'acme/x/y' },
      { ...ok, repository: 'acme/..' },
      { ...ok, workflow: '../release.yml' },
      { ...ok, workflow: 'release.sh' },
    ]) {
      expect(() => buildGithubTrustRule(bad)).toThrow(ToolsealError);
    }
    expect(() => buildGitlabTrustRule({ projectPath: 'g/p', projectId: 'x', audience: 'a' })).toThrow(ToolsealError);
    expect(() =>
      buildGitlabTrustRule({ projectPath: 'g/p', projectId: '1', audience: 'a', ciConfigPath: '../x.yml' }),
    ).toThrow(ToolsealError);
  });
});

describe('validateTrustRule', () => {
  it('accepts https issuers, and loopback http only when allowed', () => {
    expect(validateTrustRule(base)).toEqual(base);
    const loopback = { ...base, issuer: 'http://127.0.0.1:8080' };
    expect(() => validateTrustRule(loopback)).toThrow('https:');
    expect(validateTrustRule(loopback, { allowInsecureLoopbackIssuer: true }).issuer).toBe('http://127.0.0.1:8080');
    expect(() =>
      validateTrustRule({ ...base, issuer: 'http://issuer.example' }, { allowInsecureLoopbackIssuer: true }),
    ).toThrow('https:');
  });

  it('refuses rules that pin nothing, reserved claims, odd issuers and values', () => {
    const bad: TrustRule[] = [
      { ...base, claims: {} },
      { ...base, claims: { aud: 'x' } },
      { ...base, claims: { Repository: 'x' } },
      { ...base, claims: { repository: '' } },
      { ...base, claims: { repository: 'a\nb' } },
      { ...base, claims: { repository: 'a' }, refClaims: { repository: 'a' } },
      { ...base, audience: '' },
      { ...base, issuer: 'https://issuer.example/?x=1' },
      { ...base, issuer: 'https://user@issuer.example' },
      { ...base, issuer: 'HTTPS://Issuer.Example' },
      { ...base, issuer: 'not a url' },
    ];
    for (const rule of bad) expect(() => validateTrustRule(rule)).toThrow(ToolsealError);
  });

  it('parses --claim NAME=VALUE at the first =, keeping the value exactly', () => {
    expect(parseClaimArgument('ref=refs/tags/v=1 ')).toEqual(['ref', 'refs/tags/v=1 ']);
    for (const bad of ['ref', '=x', 'ref=', 'exp=1', 'Ref=x'])
      expect(() => parseClaimArgument(bad)).toThrow(ToolsealError);
  });
});
