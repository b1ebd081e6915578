// `toolseal publisher add|list|revoke|rotate-token|trust|untrust`: manage the publishers of a data folder and their
// trusted-publishing rules (issue 28; docs/trusted-publishing.md). A token is printed once (only its hash is stored);
// a revocation, rotation or rule change holds at once, also for a server already running on the folder.

import { parseArgs } from 'node:util';
import {
  buildGithubTrustRule,
  buildGitlabTrustRule,
  describeTrustRule,
  lookupGithubOwnerId,
  parseClaimArgument,
  type TrustRule,
} from '../oidc/index.ts';
import {
  addVerifiedPublisher,
  listPublishers,
  listTrustRules,
  revokePublisher,
  rotatePublisherToken,
  trustNamespace,
  untrustNamespace,
} from '../server/index.ts';
import { resolveDatabaseUrl, resolveDataDir } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';

export const publisherUsage = `toolseal publisher add NAMESPACE [--unverified-namespace] [--prove-http DOMAIN --signed-timestamp T --signature HEX] [--data DIR]
  Creates a publisher owning NAMESPACE (reverse-DNS, e.g. com.example; unique case-insensitively)
  and prints only its bearer token on stdout. The token is shown once; only its hash is stored.
  io.github.OWNER namespaces belong to GitHub OIDC (publisher trust --github); --unverified-namespace gives one
  to a token anyway, and its attestations say the namespace is not verified. --prove-http checks the MCP Registry
  HTTP proof first: the Ed25519 key in https://DOMAIN/.well-known/mcp-registry-auth signed T (RFC 3339, within 60 s).
toolseal publisher list [--data DIR]
  Prints one JSON object: every publisher's namespace, creation time and whether (and when) it was revoked, and
  the trust rules in force ("trustRules"); never a token or a token hash.
toolseal publisher revoke NAMESPACE [--data DIR]
  Revokes the publisher: its token is refused (401) from now on, also by a running server; its manifests
  stay served. Prints one JSON object (revoking again keeps the first time: "alreadyRevoked": true).
toolseal publisher rotate-token NAMESPACE [--data DIR]
  Gives the publisher a new token and prints only it; the old token is refused from now on.
toolseal publisher trust NAMESPACE --audience AUD (--issuer URL --claim NAME=VALUE [--claim …] [--ref-claim NAME=PATH]
    | --github OWNER/REPO [--owner-id N] [--workflow FILE] [--environment ENV]
    | --gitlab GROUP/PROJECT --project-id N [--ci-config PATH] [--environment ENV])
    [--oidc-only] [--issuer URL] [--github-issuer URL] [--allow-insecure-issuer] [--data DIR]
  Lets CI publish to NAMESPACE with an OIDC ID token from the issuer, for the audience, whose claims equal every
  --claim exactly (--ref-claim: PATH@any ref). --github pins repository and repository_owner_id (looked up on
  GitHub unless --owner-id), and workflow_ref and environment when given; --gitlab pins project_path, project_id
  and ci_config_ref_uri. --issuer with them: a GitHub Enterprise or self-managed GitLab issuer. --oidc-only: the
  namespace then refuses long-lived tokens. A namespace without a publisher is created for OIDC only (no token).
  Prints the rule as one JSON object, with the id publisher untrust takes.
toolseal publisher untrust NAMESPACE RULE-ID [--data DIR]
  Removes a trust rule (kept in the database with the time it was removed); prints it, and one line on stderr.
--database URL (or TOOLSEAL_DATABASE_URL) instead of --data: the publishers of a PostgreSQL registry.`;

export async function runPublisherCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      data: { type: 'string' },
      database: { type: 'string' },
      'unverified-namespace': { type: 'boolean' },
      'prove-http': { type: 'string' },
      'signed-timestamp': { type: 'string' },
      signature: { type: 'string' },
      issuer: { type: 'string' },
      audience: { type: 'string' },
      claim: { type: 'string', multiple: true },
      'ref-claim': { type: 'string', multiple: true },
      github: { type: 'string' },
      'owner-id': { type: 'string' },
      workflow: { type: 'string' },
      environment: { type: 'string' },
      gitlab: { type: 'string' },
      'project-id': { type: 'string' },
      'ci-config': { type: 'string' },
      'oidc-only': { type: 'boolean' },
      'github-issuer': { type: 'string' },
      'allow-insecure-issuer': { type: 'boolean' },
    },
    allowPositionals: true,
  });
  const [action, namespace, ...rest] = positionals;
  const dataDir = resolveDatabaseUrl(values.database) ?? resolveDataDir(values.data);
  if (action === 'list' && namespace === undefined) {
    const [publishers, rules] = await Promise.all([listPublishers(dataDir), listTrustRules(dataDir)]);
    await writeStdout(`${JSON.stringify({ publishers, trustRules: rules.map(formatRule) })}\n`);
    return 0;
  }
  if (namespace === undefined) throw new UsageError(publisherUsage);
  if (action === 'untrust') {
    const id = rest[0];
    if (rest.length !== 1 || id === undefined || !/^[1-9][0-9]{0,15}$/.test(id)) throw new UsageError(publisherUsage);
    const removed = await untrustNamespace(dataDir, namespace, Number(id));
    process.stderr.write(
      `toolseal: trust rule ${removed.id} of ${removed.namespace} removed (${describeTrustRule(removed)})\n`,
    );
    await writeStdout(`${JSON.stringify(formatRule(removed))}\n`);
    return 0;
  }
  if (rest.length > 0) throw new UsageError(publisherUsage);
  if (action === 'add') {
    const proof = readDomainProof(values);
    const added = await addVerifiedPublisher(dataDir, namespace, {
      unverifiedNamespace: values['unverified-namespace'] === true,
      ...(proof === undefined ? {} : { domainProof: proof }),
      allowInsecureLoopback: values['allow-insecure-issuer'] === true,
    });
    await writeStdout(`${added.token}\n`);
  } else if (action === 'trust') {
    const rule = await readTrustRule(values);
    const stored = await trustNamespace(dataDir, namespace, rule, {
      allowInsecureIssuer: values['allow-insecure-issuer'] === true,
      ...(values['github-issuer'] === undefined ? {} : { githubIssuer: values['github-issuer'] }),
    });
    await writeStdout(`${JSON.stringify(formatRule(stored))}\n`);
  } else if (action === 'rotate-token') {
    await writeStdout(`${(await rotatePublisherToken(dataDir, namespace)).token}\n`);
  } else if (action === 'revoke') {
    await writeStdout(`${JSON.stringify(await revokePublisher(dataDir, namespace))}\n`);
  } else {
    throw new UsageError(publisherUsage);
  }
  return 0;
}

interface TrustFlags {
  issuer?: string | undefined;
  audience?: string | undefined;
  claim?: string[] | undefined;
  'ref-claim'?: string[] | undefined;
  github?: string | undefined;
  'owner-id'?: string | undefined;
  workflow?: string | undefined;
  environment?: string | undefined;
  gitlab?: string | undefined;
  'project-id'?: string | undefined;
  'ci-config'?: string | undefined;
  'oidc-only'?: boolean | undefined;
  'allow-insecure-issuer'?: boolean | undefined;
}

/** The rule the flags describe: one of --github, --gitlab or --issuer with --claim. */
async function readTrustRule(values: TrustFlags): Promise<TrustRule> {
  const audience = values.audience;
  if (audience === undefined)
    throw new UsageError('publisher trust needs --audience (the registry origin CI asks for)');
  const oidcOnly = values['oidc-only'] === true;
  if (values.github !== undefined && values.gitlab !== undefined)
    throw new UsageError('--github or --gitlab, not both');
  const shorthand = values.github !== undefined || values.gitlab !== undefined;
  if (shorthand && (values.claim !== undefined || values['ref-claim'] !== undefined)) {
    throw new UsageError('--claim and --ref-claim go with --issuer, not with --github or --gitlab');
  }
  if (values.github !== undefined) {
    const repository = values.github;
    const ownerId =
      values['owner-id'] ??
      (await lookupGithubOwnerId(repository.split('/')[0] ?? '', (url, init) => fetch(url, init)));
    const rule = buildGithubTrustRule({
      repository,
      ownerId,
      audience,
      oidcOnly,
      ...(values.workflow === undefined ? {} : { workflow: values.workflow }),
      ...(values.environment === undefined ? {} : { environment: values.environment }),
    });
    return values.issuer === undefined ? rule : { ...rule, issuer: values.issuer };
  }
  if (values.gitlab !== undefined) {
    const projectId = values['project-id'];
    if (projectId === undefined) throw new UsageError('--gitlab needs --project-id (the numeric project id)');
    return buildGitlabTrustRule({
      projectPath: values.gitlab,
      projectId,
      audience,
      oidcOnly,
      ...(values.issuer === undefined ? {} : { issuer: values.issuer }),
      ...(values['ci-config'] === undefined ? {} : { ciConfigPath: values['ci-config'] }),
      ...(values.environment === undefined ? {} : { environment: values.environment }),
    });
  }
  if (values.issuer === undefined) throw new UsageError('publisher trust needs --github, --gitlab or --issuer');
  for (const flag of ['owner-id', 'workflow', 'environment', 'project-id', 'ci-config'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} goes with --github or --gitlab`);
  }
  return {
    issuer: values.issuer,
    audience,
    claims: readClaims(values.claim ?? [], '--claim'),
    refClaims: readClaims(values['ref-claim'] ?? [], '--ref-claim'),
    oidcOnly,
  };
}

function readClaims(argumentsGiven: readonly string[], flag: string): Record<string, string> {
  const claims: Record<string, string> = {};
  for (const argument of argumentsGiven) {
    const [name, value] = parseClaimArgument(argument);
    if (Object.hasOwn(claims, name)) throw new UsageError(`${flag} ${name} given twice`);
    claims[name] = value;
  }
  return claims;
}

function readDomainProof(values: {
  'prove-http'?: string | undefined;
  'signed-timestamp'?: string | undefined;
  signature?: string | undefined;
}): { domain: string; timestamp: string; signatureHex: string } | undefined {
  const domain = values['prove-http'];
  const timestamp = values['signed-timestamp'];
  const signatureHex = values.signature;
  if (domain === undefined && timestamp === undefined && signatureHex === undefined) return undefined;
  if (domain === undefined || timestamp === undefined || signatureHex === undefined) {
    throw new UsageError('--prove-http DOMAIN goes with --signed-timestamp T and --signature HEX');
  }
  return { domain, timestamp, signatureHex };
}

/** A rule as printed: what it pins and when; the namespace's rules are public configuration, never secrets. */
function formatRule(rule: {
  id: number;
  namespace: string;
  issuer: string;
  audience: string;
  claims: Record<string, string>;
  refClaims: Record<string, string>;
  oidcOnly: boolean;
  createdAt: string;
  removedAt: string | null;
}): object {
  return {
    id: rule.id,
    namespace: rule.namespace,
    issuer: rule.issuer,
    audience: rule.audience,
    claims: rule.claims,
    refClaims: rule.refClaims,
    oidcOnly: rule.oidcOnly,
    createdAt: rule.createdAt,
    ...(rule.removedAt === null ? {} : { removedAt: rule.removedAt }),
  };
}
