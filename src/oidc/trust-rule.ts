// Trust rules for trusted publishing (issue 28 §1): which OIDC issuer, audience and exact claims may publish to a
// namespace, after OpenID Connect Core 1.0 §2 (ID token claims) and the GitHub/GitLab OIDC claim references, filled
// the way npm and PyPI trusted publishing do (repository and numeric owner id pinned, workflow file, environment).

import { ToolsealError } from '../core/errors.ts';
import { isLoopbackHost } from './issuer-url.ts';

/** One rule: a token is trusted for the namespace when its issuer, audience and every listed claim match exactly. */
export interface TrustRule {
  /** Exact `iss` (OIDC Core §2): an `https:` URL, or a loopback `http:` URL when the registry allows it. */
  issuer: string;
  /** The `aud` value the token must carry (exactly; `aud` may be an array holding it). */
  audience: string;
  /** Claims whose value must equal these strings exactly: no prefix, no case folding, no trimming. */
  claims: Readonly<Record<string, string>>;
  /**
   * Claims of the form `PATH@REF` (GitHub `workflow_ref`, GitLab `ci_config_ref_uri`) whose PATH (the text before
   * the first `@`) must equal the value exactly, with any non-empty REF: a workflow file is trusted on every tag.
   */
  refClaims: Readonly<Record<string, string>>;
  /** The namespace then refuses long-lived publisher tokens (`publisher trust … --oidc-only`). */
  oidcOnly: boolean;
}

export const GITHUB_ACTIONS_ISSUER = 'https://token.actions.githubusercontent.com';
export const GITLAB_COM_ISSUER = 'https://gitlab.com';

/** Registered JWT claims (RFC 7519 §4.1) the verifier checks itself; a rule cannot pin them as plain claims. */
const RESERVED_CLAIMS: ReadonlySet<string> = new Set(['iss', 'aud', 'exp', 'nbf', 'iat', 'jti']);
const CLAIM_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,63}$/;
const MAX_VALUE_LENGTH = 512;
const MAX_CLAIMS = 16;
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

export interface TrustRuleValidationOptions {
  /** Accept `http://127.0.0.1…`/`http://localhost…` issuers (tests; `serve --allow-insecure-issuer`). */
  allowInsecureLoopbackIssuer?: boolean;
}

/** `rule` checked and copied (BAD_REQUEST naming the field that is wrong). A rule pins at least one claim. */
export function validateTrustRule(rule: TrustRule, options: TrustRuleValidationOptions = {}): TrustRule {
  validateIssuerUrl(rule.issuer, options);
  validateValue('audience', rule.audience);
  const claims = validateClaimMap('claims', rule.claims);
  const refClaims = validateClaimMap('refClaims', rule.refClaims);
  const count = Object.keys(claims).length + Object.keys(refClaims).length;
  if (count === 0) {
    throw new ToolsealError('BAD_REQUEST', 'a trust rule pins at least one claim (e.g. repository=OWNER/REPO)', {
      pointer: '/claims',
    });
  }
  if (count > MAX_CLAIMS) {
    throw new ToolsealError('BAD_REQUEST', `a trust rule pins at most ${MAX_CLAIMS} claims`, { pointer: '/claims' });
  }
  for (const name of Object.keys(refClaims)) {
    if (Object.hasOwn(claims, name)) {
      throw new ToolsealError('BAD_REQUEST', `claim ${name} is pinned twice`, { pointer: `/refClaims/${name}` });
    }
  }
  if (typeof rule.oidcOnly !== 'boolean') {
    throw new ToolsealError('BAD_REQUEST', 'oidcOnly must be a boolean', { pointer: '/oidcOnly' });
  }
  return { issuer: rule.issuer, audience: rule.audience, claims, refClaims, oidcOnly: rule.oidcOnly };
}

/** An issuer identifier as OIDC Discovery §2 defines it: https, a host, no query or fragment. */
export function validateIssuerUrl(issuer: string, options: TrustRuleValidationOptions = {}): URL {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ToolsealError('BAD_REQUEST', 'issuer is not a URL', { pointer: '/issuer' });
  }
  const insecureAllowed = options.allowInsecureLoopbackIssuer === true && url.protocol === 'http:';
  if (url.protocol !== 'https:' && !(insecureAllowed && isLoopbackHost(url.hostname))) {
    throw new ToolsealError('BAD_REQUEST', 'issuer must be an https: URL', { pointer: '/issuer' });
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '' || issuer.endsWith('?')) {
    throw new ToolsealError('BAD_REQUEST', 'issuer has no query, fragment or credentials', { pointer: '/issuer' });
  }
  if (url.href !== issuer && `${url.href.replace(/\/$/, '')}` !== issuer) {
    throw new ToolsealError('BAD_REQUEST', 'issuer must be written in its normalised form', { pointer: '/issuer' });
  }
  return url;
}

/** `NAME=VALUE` from `--claim` (split at the first `=`; the value is kept exactly). */
export function parseClaimArgument(argument: string): [name: string, value: string] {
  const at = argument.indexOf('=');
  if (at <= 0) throw new ToolsealError('BAD_REQUEST', '--claim takes NAME=VALUE');
  const name = argument.slice(0, at);
  const value = argument.slice(at + 1);
  validateClaimName(name, '/claims');
  validateValue(`claim ${name}`, value);
  return [name, value];
}

export interface GithubRuleInput {
  /** `OWNER/REPO`, as GitHub reports it in the `repository` claim (exact case). */
  repository: string;
  /** GitHub's numeric owner id (the `repository_owner_id` claim): survives renames, refuses a resurrected name. */
  ownerId: string;
  /** Workflow file name under .github/workflows (e.g. `release.yml`). */
  workflow?: string;
  /** GitHub deployment environment (the `environment` claim). */
  environment?: string;
  /** The audience this registry asks CI for (e.g. its public origin). */
  audience: string;
  oidcOnly?: boolean;
}

const GITHUB_REPOSITORY = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;
const WORKFLOW_FILE = /^[A-Za-z0-9._-]{1,100}\.ya?ml$/;

/** `--github OWNER/REPO --owner-id N [--workflow FILE] [--environment ENV]` as a rule (npm/PyPI style). */
export function buildGithubTrustRule(input: GithubRuleInput): TrustRule {
  if (
    !GITHUB_REPOSITORY.test(input.repository) ||
    input.repository.endsWith('/.') ||
    input.repository.endsWith('/..')
  ) {
    throw new ToolsealError('BAD_REQUEST', '--github takes OWNER/REPO');
  }
  if (!/^[1-9][0-9]{0,19}$/.test(input.ownerId)) {
    throw new ToolsealError('BAD_REQUEST', '--owner-id takes the numeric GitHub owner id');
  }
  const claims: Record<string, string> = { repository: input.repository, repository_owner_id: input.ownerId };
  const refClaims: Record<string, string> = {};
  if (input.workflow !== undefined) {
    if (!WORKFLOW_FILE.test(input.workflow)) {
      throw new ToolsealError('BAD_REQUEST', '--workflow takes a file name under .github/workflows (e.g. release.yml)');
    }
    refClaims.workflow_ref = `${input.repository}/.github/workflows/${input.workflow}`;
  }
  if (input.environment !== undefined) claims.environment = input.environment;
  return validateTrustRule({
    issuer: GITHUB_ACTIONS_ISSUER,
    audience: input.audience,
    claims,
    refClaims,
    oidcOnly: input.oidcOnly ?? false,
  });
}

export interface GitlabRuleInput {
  /** `GROUP[/SUBGROUP…]/PROJECT`, as GitLab reports it in the `project_path` claim. */
  projectPath: string;
  /** GitLab's numeric project id (the `project_id` claim): pinned against a re-created project of the same path. */
  projectId: string;
  /** The CI file whose pipeline may publish (default `.gitlab-ci.yml`). */
  ciConfigPath?: string;
  environment?: string;
  /** Self-managed GitLab instance (default https://gitlab.com). */
  issuer?: string;
  audience: string;
  oidcOnly?: boolean;
}

/** `--gitlab GROUP/PROJECT --project-id N [--ci-config PATH] [--environment ENV]` as a rule (PyPI style). */
export function buildGitlabTrustRule(input: GitlabRuleInput): TrustRule {
  if (!/^[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)+$/.test(input.projectPath) || input.projectPath.includes('..')) {
    throw new ToolsealError('BAD_REQUEST', '--gitlab takes GROUP/PROJECT');
  }
  if (!/^[1-9][0-9]{0,19}$/.test(input.projectId)) {
    throw new ToolsealError('BAD_REQUEST', '--project-id takes the numeric GitLab project id');
  }
  const issuer = input.issuer ?? GITLAB_COM_ISSUER;
  const host = validateIssuerUrl(issuer).host;
  const ciConfigPath = input.ciConfigPath ?? '.gitlab-ci.yml';
  if (!/^[A-Za-z0-9_./-]{1,200}$/.test(ciConfigPath) || ciConfigPath.includes('..') || ciConfigPath.startsWith('/')) {
    throw new ToolsealError('BAD_REQUEST', '--ci-config takes a path inside the project');
  }
  const claims: Record<string, string> = { project_path: input.projectPath, project_id: input.projectId };
  if (input.environment !== undefined) claims.environment = input.environment;
  return validateTrustRule({
    issuer,
    audience: input.audience,
    claims,
    // GitLab: ci_config_ref_uri = HOST/PROJECT_PATH//CONFIG_PATH@REF
    refClaims: { ci_config_ref_uri: `${host}/${input.projectPath}//${ciConfigPath}` },
    oidcOnly: input.oidcOnly ?? false,
  });
}

/** A short label for a rule in logs and refusals: issuer and the identifying claim, never a token. */
export function describeTrustRule(rule: TrustRule): string {
  const subject = rule.claims.repository ?? rule.claims.project_path ?? rule.claims.sub ?? Object.keys(rule.claims)[0];
  return `${rule.issuer} ${subject ?? ''}`.trim();
}

function validateClaimMap(field: string, map: Readonly<Record<string, string>>): Record<string, string> {
  if (typeof map !== 'object' || map === null || Array.isArray(map)) {
    throw new ToolsealError('BAD_REQUEST', `${field} must be an object`, { pointer: `/${field}` });
  }
  const copy: Record<string, string> = {};
  for (const [name, value] of Object.entries(map)) {
    validateClaimName(name, `/${field}`);
    validateValue(`claim ${name}`, value);
    copy[name] = value;
  }
  return copy;
}

function validateClaimName(name: string, pointer: string): void {
  if (!CLAIM_NAME_PATTERN.test(name)) {
    throw new ToolsealError('BAD_REQUEST', 'claim names are lowercase ASCII letters, digits and _', { pointer });
  }
  if (RESERVED_CLAIMS.has(name)) {
    throw new ToolsealError('BAD_REQUEST', `claim ${name} is checked by the verifier, not by a rule`, { pointer });
  }
}

function validateValue(what: string, value: unknown): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_VALUE_LENGTH) {
    throw new ToolsealError('BAD_REQUEST', `${what} must be 1–${MAX_VALUE_LENGTH} characters`);
  }
  if (CONTROL_CHARACTERS.test(value)) {
    throw new ToolsealError('BAD_REQUEST', `${what} holds a control character`);
  }
}
