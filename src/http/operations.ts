// Every route of the registry's API once (OpenAPI 3.1 §4.8.10 Operation): method, path pattern (from ROUTES), query
// parameters, request body, answers and the problem codes it can refuse with. mountOperation mounts a route from its
// entry and src/http/openapi.ts writes GET /openapi.json from the same entries, so the two cannot drift (a test
// compares the document with the routes Hono has mounted). Adding a route is one entry here and one mountOperation.

import type { Handler, MiddlewareHandler } from 'hono';
import { SIGSTORE_BUNDLE_MEDIA_TYPE, TRUSTED_ROOT_MEDIA_TYPE } from '../attest/index.ts';
import { ROUTES } from '../protocol/routes.ts';
import { JOSE_JSON_CONTENT_TYPE, JSON_CONTENT_TYPE } from '../protocol/wire.ts';
import type { App, AppEnv } from './app-env.ts';
import {
  type AnswerSpec,
  AUTH_CODES,
  ENVELOPE_CODES,
  type OperationSpec,
  type ParameterSpec,
  PIPELINE_CODES,
  type SchemaSpec,
  STRICT_PARSE_CODES,
  WRITE_CODES,
} from './operation-spec.ts';

/** The prefix every MCP Registry read route (issue 27 §3) lives under. */
export const OFFICIAL_API_PREFIX = '/v0.1';

// ── schemas and parameters used more than once ──

const notModified = { description: 'Not Modified (If-None-Match matched the ETag)' } as const;
const namespaceParam = { description: 'the reverse-DNS namespace of the manifest name (`io.github.acme`)' };
const nameParam = { description: 'the rest of the manifest name (`payments`)' };
const versionParam = { description: 'a SemVer 2.0.0 version' };
const approvalIdParam = { description: 'an approval id: `apr_` and 22 base64url characters' };
const officialNameParam = { description: 'the server name, URL-encoded (`io.github.acme%2Fpayments`)' };
const text = (description: string): AnswerSpec => ({
  description,
  content: { 'text/plain; charset=utf-8': { inline: { type: 'string' } } },
});
const json = (description: string, schema: SchemaSpec, headers?: Record<string, string>): AnswerSpec => ({
  description,
  content: { [JSON_CONTENT_TYPE]: schema },
  ...(headers === undefined ? {} : { headers }),
});
const integerQuery = (description: string): ParameterSpec => ({
  description,
  required: true,
  schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$' },
});
/** A Sigstore bundle answer (both bundle routes answer the same bytes). */
const BUNDLE_ANSWERS: Readonly<Record<number, AnswerSpec>> = {
  200: {
    description: 'the bundle, with the latest checkpoint and an inclusion proof computed by the registry',
    content: {
      [SIGSTORE_BUNDLE_MEDIA_TYPE]: {
        inline: { type: 'object', required: ['mediaType', 'verificationMaterial', 'dsseEnvelope'] },
      },
    },
  },
};

/** The routes (each module mounts its own, in its order). Keys name them in mountOperation calls. */
export const OPERATIONS = {
  health: {
    method: 'get',
    path: ROUTES.health,
    operationId: 'getHealth',
    summary: 'Liveness, the log size, the active key and each witness',
    tag: 'meta',
    caller: 'anyone',
    answers: { 200: json('the registry is up', 'HealthResponse') },
    problems: [],
  },
  jwks: {
    method: 'get',
    path: ROUTES.jwks,
    operationId: 'getJwks',
    summary: 'The attestation keys (RFC 7517 §5 JWK Set)',
    tag: 'meta',
    caller: 'anyone',
    answers: { 200: json('the JWK Set', 'Jwks') },
    problems: [],
  },
  openapi: {
    method: 'get',
    path: ROUTES.openapi,
    operationId: 'getOpenApiDocument',
    summary: 'This document (OpenAPI 3.1)',
    tag: 'meta',
    caller: 'anyone',
    answers: { 200: json('the OpenAPI document', 'OpenApiDocument'), 304: notModified },
    problems: [],
  },
  publish: {
    method: 'post',
    path: ROUTES.manifests,
    operationId: 'publishManifest',
    summary: 'Publish a manifest: run the pipeline, sign, log and store the canonical bytes',
    tag: 'registry',
    caller: 'publisher',
    body: {
      description:
        'the manifest as bytes (read strictly: duplicate keys, unsafe numbers and a BOM are refused); at most ' +
        '`serve --max-body-bytes` bytes, 1 MiB by default (TOO_LARGE beyond)',
      schema: 'Manifest',
    },
    answers: {
      201: json('published', 'PublishResponse', { Location: 'the path of the version' }),
      200: json('the same bytes were already published as this version', 'PublishResponse', {
        Location: 'the path of the version',
      }),
    },
    problems: [...PIPELINE_CODES, ...AUTH_CODES, 'VERSION_EXISTS', 'NAMESPACE_TAKEN', ...WRITE_CODES],
  },
  manifests: {
    method: 'get',
    path: ROUTES.manifests,
    operationId: 'listManifests',
    summary: 'Search manifests by name, a page at a time',
    tag: 'registry',
    caller: 'anyone',
    query: {
      q: { description: 'a substring of the name' },
      limit: { description: 'page size, 1 to 200 (default 50)', schema: { type: 'string', pattern: '^[0-9]{1,16}$' } },
      cursor: { description: 'the `nextCursor` of the previous page' },
    },
    answers: { 200: json('a page of manifests', 'ManifestListResponse') },
    problems: [],
  },
  manifest: {
    method: 'get',
    path: ROUTES.manifest,
    operationId: 'listVersions',
    summary: "A manifest's versions",
    tag: 'registry',
    caller: 'anyone',
    pathParams: { namespace: namespaceParam, name: nameParam },
    answers: { 200: json('the versions', 'VersionListResponse') },
    problems: ['NOT_FOUND'],
  },
  version: {
    method: 'get',
    path: ROUTES.version,
    operationId: 'getManifestVersion',
    summary: 'The exact signed bytes of a version (`latest`: a redirect to the newest active version)',
    tag: 'registry',
    caller: 'anyone',
    pathParams: { namespace: namespaceParam, name: nameParam, version: versionParam },
    answers: {
      200: json('the canonical (RFC 8785) manifest bytes', 'Manifest', {
        ETag: 'the digest, quoted',
        'Repr-Digest': 'RFC 9530 sha-256 of the bytes',
        Link: 'the attestation',
      }),
      302: { description: '`latest`: the newest active version', headers: { Location: 'the path of that version' } },
      304: notModified,
    },
    problems: ['NOT_FOUND'],
  },
  attestation: {
    method: 'get',
    path: ROUTES.attestation,
    operationId: 'getAttestation',
    summary: "A version's attestation (RFC 7515 §7.2.2 flattened JWS over an in-toto statement)",
    tag: 'registry',
    caller: 'anyone',
    pathParams: { namespace: namespaceParam, name: nameParam, version: versionParam },
    answers: {
      200: { description: 'the attestation as stored', content: { [JOSE_JSON_CONTENT_TYPE]: 'FlattenedJws' } },
      304: notModified,
    },
    problems: ['NOT_FOUND'],
  },
  bundle: {
    method: 'get',
    path: ROUTES.bundle,
    operationId: 'getSigstoreBundle',
    summary: "A version's Sigstore bundle v0.3 (DSSE, P-256 key hint, its hashedrekord leaf proven in this log)",
    tag: 'registry',
    caller: 'anyone',
    pathParams: { namespace: namespaceParam, name: nameParam, version: versionParam },
    answers: BUNDLE_ANSWERS,
    problems: ['NOT_FOUND'],
  },
  bundleByDigest: {
    method: 'get',
    path: ROUTES.bundleByDigest,
    operationId: 'getSigstoreBundleByDigest',
    summary:
      'The Sigstore bundle of the version whose bytes have this digest (a manifest declares its own name and version, ' +
      'so a digest names at most one): the same bytes as …/{version}/bundle',
    tag: 'registry',
    caller: 'anyone',
    pathParams: { digest: { description: 'sha256 of the manifest bytes' } },
    answers: BUNDLE_ANSWERS,
    problems: ['NOT_FOUND'],
  },
  trustedRoot: {
    method: 'get',
    path: ROUTES.trustedRoot,
    operationId: 'getSigstoreTrustedRoot',
    summary: 'The Sigstore trusted root naming this log (its key, key id and validity); bundle keys are in the JWKS',
    tag: 'log',
    caller: 'anyone',
    answers: {
      200: {
        description: 'a TrustedRoot (sigstore/protobuf-specs)',
        content: { [TRUSTED_ROOT_MEDIA_TYPE]: { inline: { type: 'object', required: ['mediaType', 'tlogs'] } } },
      },
    },
    problems: ['NOT_FOUND'],
  },
  yank: {
    method: 'post',
    path: ROUTES.yank,
    operationId: 'yankVersion',
    summary: 'Mark a version yanked, with a reason (the bytes stay served)',
    tag: 'registry',
    caller: 'publisher',
    pathParams: { namespace: namespaceParam, name: nameParam, version: versionParam },
    body: { description: '`{"reason": "…"}`, a closed object', maxBytes: 16 * 1024, schema: 'YankRequest' },
    answers: { 200: json('yanked (or already yanked: `alreadyYanked`)', 'YankResponse') },
    problems: [...STRICT_PARSE_CODES, 'UNKNOWN_FIELD', ...AUTH_CODES, 'NOT_FOUND', ...WRITE_CODES],
  },
  whoami: {
    method: 'get',
    path: ROUTES.whoami,
    operationId: 'whoami',
    summary: 'The principal a bearer token belongs to',
    tag: 'approvals',
    caller: 'any principal',
    answers: { 200: json('the principal', 'WhoamiResponse') },
    problems: ['UNAUTHENTICATED'],
  },
  requestApproval: {
    method: 'post',
    path: ROUTES.approvals,
    operationId: 'requestApproval',
    summary: 'Ask an operator to approve one tool call (the registry recomputes the action digest)',
    tag: 'approvals',
    caller: 'host',
    body: { description: 'the action envelope as it travels', maxBytes: 64 * 1024, schema: 'ActionEnvelope' },
    answers: {
      201: json('a new request', 'ApprovalCreatedResponse', { Location: 'the URL of the request' }),
      200: json('an identical request still stands', 'ApprovalCreatedResponse'),
    },
    problems: [...AUTH_CODES, ...ENVELOPE_CODES, ...WRITE_CODES],
  },
  listApprovals: {
    method: 'get',
    path: ROUTES.approvals,
    operationId: 'listApprovals',
    summary: 'Approval requests, newest first',
    tag: 'approvals',
    caller: 'operator',
    query: {
      status: {
        description: 'only requests in this state',
        schema: { enum: ['pending', 'approved', 'denied', 'consumed', 'expired'] },
      },
      limit: {
        description: 'at most this many, 1 to 500 (default 100)',
        schema: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' },
      },
    },
    answers: { 200: json('the requests', 'ApprovalListResponse') },
    problems: [...AUTH_CODES],
  },
  approval: {
    method: 'get',
    path: ROUTES.approval,
    operationId: 'getApproval',
    summary: 'One approval request, with what it binds',
    tag: 'approvals',
    caller: 'host or operator',
    pathParams: { id: approvalIdParam },
    answers: { 200: json('the request', 'ApprovalResponse') },
    problems: [...AUTH_CODES, 'NOT_FOUND'],
  },
  approvalDecision: {
    method: 'post',
    path: ROUTES.approvalDecision,
    operationId: 'decideApproval',
    summary: 'Approve or deny a pending request (logged)',
    tag: 'approvals',
    caller: 'operator',
    pathParams: { id: approvalIdParam },
    body: { description: 'the decision, a closed object', maxBytes: 64 * 1024, schema: 'ApprovalDecisionRequest' },
    answers: { 200: json('decided', 'ApprovalTransitionResponse') },
    problems: [
      ...STRICT_PARSE_CODES,
      'UNKNOWN_FIELD',
      ...AUTH_CODES,
      'NOT_FOUND',
      'APPROVAL_DIGEST_MISMATCH',
      'APPROVAL_DECIDED',
      'APPROVAL_CONSUMED',
      'APPROVAL_EXPIRED',
      ...WRITE_CODES,
    ],
  },
  approvalConsume: {
    method: 'post',
    path: ROUTES.approvalConsume,
    operationId: 'consumeApproval',
    summary: 'Consume an approved request, once, for the call about to be dispatched (logged)',
    tag: 'approvals',
    caller: 'host',
    pathParams: { id: approvalIdParam },
    body: { description: 'the envelope of the call', maxBytes: 64 * 1024, schema: 'ActionEnvelope' },
    answers: { 200: json('consumed', 'ApprovalTransitionResponse') },
    problems: [
      ...AUTH_CODES,
      ...ENVELOPE_CODES,
      'APPROVAL_DIGEST_MISMATCH',
      'APPROVAL_PENDING',
      'APPROVAL_DENIED',
      'APPROVAL_CONSUMED',
      'APPROVAL_EXPIRED',
      ...WRITE_CODES,
    ],
  },
  blob: {
    method: 'get',
    path: ROUTES.blob,
    operationId: 'getBlob',
    summary: 'Manifest bytes by their digest',
    tag: 'registry',
    caller: 'anyone',
    pathParams: { digest: { description: 'sha256 of the bytes' } },
    answers: {
      200: json('the bytes', 'Manifest', { ETag: 'the digest, quoted', Link: 'the attestations of the digest' }),
      304: notModified,
    },
    problems: ['NOT_FOUND'],
  },
  attestationsByDigest: {
    method: 'get',
    path: ROUTES.attestationsByDigest,
    operationId: 'getAttestationsByDigest',
    summary: 'Every name@version bound to a digest, each with its attestation and inclusion proof',
    tag: 'registry',
    caller: 'anyone',
    pathParams: { digest: { description: 'sha256 of manifest bytes' } },
    answers: { 200: json('the bindings', 'BindingsResponse') },
    problems: ['NOT_FOUND'],
  },
  logCheckpoint: {
    method: 'get',
    path: ROUTES.logCheckpoint,
    operationId: 'getCheckpoint',
    summary: 'The latest signed checkpoint (C2SP tlog-checkpoint), with the cosignatures received',
    tag: 'log',
    caller: 'anyone',
    answers: { 200: text('the signed note') },
    problems: ['NOT_FOUND'],
  },
  logKey: {
    method: 'get',
    path: ROUTES.logKey,
    operationId: 'getLogKey',
    summary: "The log's note verifier key (C2SP signed-note)",
    tag: 'log',
    caller: 'anyone',
    answers: { 200: text('the verifier string and a newline') },
    problems: [],
  },
  logTile: {
    method: 'get',
    path: ROUTES.logTile,
    operationId: 'getTile',
    summary: 'A hash tile or entry bundle (C2SP tlog-tiles), gzip when accepted',
    tag: 'log',
    caller: 'anyone',
    wildcard: {
      name: 'tilePath',
      description: 'the rest of the tile path, slashes included: `<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]`',
    },
    answers: {
      200: {
        description: 'the tile (immutable)',
        content: {
          'application/octet-stream': { inline: { type: 'string', contentMediaType: 'application/octet-stream' } },
        },
      },
    },
    problems: ['NOT_FOUND', 'PROOF_INVALID'],
  },
  inclusionProof: {
    method: 'get',
    path: ROUTES.inclusionProof,
    operationId: 'proveInclusion',
    summary: 'RFC 9162 §2.1.3 inclusion proof of a leaf in a tree size',
    tag: 'log',
    caller: 'anyone',
    query: { index: integerQuery('the leaf index'), size: integerQuery('the tree size') },
    answers: { 200: json('the proof', 'InclusionProofResponse') },
    problems: ['NOT_FOUND', 'PROOF_INVALID'],
  },
  consistencyProof: {
    method: 'get',
    path: ROUTES.consistencyProof,
    operationId: 'proveConsistency',
    summary: 'RFC 9162 §2.1.4 consistency proof between two tree sizes',
    tag: 'log',
    caller: 'anyone',
    query: { from: integerQuery('the older tree size'), to: integerQuery('the newer tree size') },
    answers: { 200: json('the proof', 'ConsistencyProofResponse') },
    problems: ['NOT_FOUND', 'PROOF_INVALID'],
  },
  officialServers: {
    method: 'get',
    path: `${OFFICIAL_API_PREFIX}/servers`,
    operationId: 'listServers',
    summary: 'MCP Registry read API: the server versions whose manifest signs a `server` member',
    tag: 'mcp-registry',
    caller: 'anyone',
    cors: true,
    query: {
      limit: { description: 'page size, 1 to 200 (default 50)' },
      cursor: { description: 'the `metadata.nextCursor` of the previous page' },
      search: { description: 'a substring of the server name' },
      version: { description: '`latest`, or an exact version' },
      updated_since: { description: 'RFC 3339 date-time: only versions changed since' },
      include_deleted: {
        description: '`true` or `false` (no version is ever deleted here)',
        schema: { enum: ['true', 'false'] },
      },
    },
    answers: { 200: json('a page of servers', 'OfficialServerList') },
    problems: [],
  },
  officialServerVersions: {
    method: 'get',
    path: `${OFFICIAL_API_PREFIX}/servers/:serverName/versions`,
    operationId: 'listServerVersions',
    summary: 'MCP Registry read API: every version of a server',
    tag: 'mcp-registry',
    caller: 'anyone',
    cors: true,
    pathParams: { serverName: officialNameParam },
    query: { include_deleted: { description: '`true` or `false`', schema: { enum: ['true', 'false'] } } },
    answers: {
      200: json('the versions', 'OfficialServerList'),
      404: json('no such server (the official body)', 'OfficialNotFound'),
    },
    problems: [],
  },
  officialServerVersion: {
    method: 'get',
    path: `${OFFICIAL_API_PREFIX}/servers/:serverName/versions/:version`,
    operationId: 'getServerVersion',
    summary: 'MCP Registry read API: one version of a server (`latest` too)',
    tag: 'mcp-registry',
    caller: 'anyone',
    cors: true,
    pathParams: { serverName: officialNameParam, version: { description: 'a version, or `latest`' } },
    query: { include_deleted: { description: '`true` or `false`', schema: { enum: ['true', 'false'] } } },
    answers: {
      200: json('the version', 'OfficialServerResponse'),
      404: json('no such server or version (the official body)', 'OfficialNotFound'),
    },
    problems: [],
  },
  officialUnknown: {
    method: 'get',
    path: `${OFFICIAL_API_PREFIX}/servers/*`,
    operationId: 'getUnknownServerPath',
    summary: 'MCP Registry read API: any other path below /servers is the official 404',
    tag: 'mcp-registry',
    caller: 'anyone',
    cors: true,
    wildcard: { name: 'rest', description: 'anything else (a name that is not URL-encoded, extra segments)' },
    answers: { 404: json('the official not-found body', 'OfficialNotFound') },
    problems: [],
  },
} as const satisfies Record<string, OperationSpec>;

export type OperationName = keyof typeof OPERATIONS;

/** The Hono path of an operation: handlers see its parameters typed, as with app.get(path, …). */
type PathOf<N extends OperationName> = (typeof OPERATIONS)[N]['path'];

/** Mount `handlers` on the method and path of the operation `name` (the only way a documented route is mounted). */
export function mountOperation<N extends OperationName>(
  app: App,
  name: N,
  ...handlers: [...MiddlewareHandler<AppEnv, PathOf<N>>[], Handler<AppEnv, PathOf<N>>]
): void {
  const operation: OperationSpec = OPERATIONS[name];
  app.on(operation.method.toUpperCase(), operation.path, ...(handlers as unknown as [Handler<AppEnv>]));
}
