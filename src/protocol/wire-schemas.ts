// The JSON shapes of wire.ts as zod 4 schemas, for the OpenAPI 3.1 document (src/http/openapi.ts; JSON Schema
// 2020-12 via z.toJSONSchema). Each schema is checked against its wire.ts type at compile time (agreesWith below), so
// the document cannot drift from what the server writes with `satisfies`. Describing only: no route parses with them.

import { z } from 'zod';
import type { JsonObject } from '../core/json.ts';
import type { RenamedTool } from '../pipeline/names.ts';
import type {
  ApprovalCreatedResponse,
  ApprovalDecisionRequest,
  ApprovalListResponse,
  ApprovalResponse,
  ApprovalStatus,
  ApprovalTransitionResponse,
  BindingsResponse,
  ConsistencyProofResponse,
  HealthResponse,
  InclusionProofResponse,
  ManifestListResponse,
  PublishResponse,
  VersionListResponse,
  WhoamiResponse,
  YankRequest,
  YankResponse,
} from './wire.ts';

/** A JSON object of any members (`JsonObject`): described as an object, typed as the wire type. */
const jsonObject = z.record(z.string(), z.unknown()) as unknown as z.ZodType<JsonObject>;
const digest = z
  .templateLiteral(['sha256:', z.string().regex(/^[0-9a-f]{64}$/)])
  .describe('sha256 of the bytes, lowercase hex');
const instant = z.string().describe('RFC 3339 date-time (UTC)');
const logIndex = z.number().int().min(0);
const versionStatus = z.enum(['active', 'yanked']);
const approvalStatus = z.enum(['pending', 'approved', 'denied', 'consumed', 'expired']);

/** RFC 9457 problem details with toolseal's stable `code` (each route narrows `code` and `status`). */
export const problemSchema = z.object({
  type: z.string().describe('https://toolseal.dev/problems/<code in kebab case>'),
  title: z.string().describe('the code'),
  status: z.number().int(),
  detail: z.string(),
  code: z.string().describe('the stable code: see the README error table'),
  pointer: z.string().optional().describe('RFC 6901 JSON Pointer into the request body, where one applies'),
});

const inclusionProofDto = z.object({
  index: logIndex,
  size: z.number().int().min(1),
  hashes: z.array(z.string()).describe('base64 sibling hashes, leaf to root (RFC 9162 §2.1.3.1)'),
  checkpoint: z.string().describe('the C2SP signed checkpoint note the proof reaches'),
});

/** RFC 7515 §7.2.2 flattened JWS (an attestation; its payload is an in-toto statement). */
export const flattenedJwsSchema = z
  .object({ protected: z.string(), payload: z.string(), signature: z.string() })
  .catchall(z.unknown());

const renamedTool = z.object({ index: z.number().int().min(0), from: z.string(), to: z.string() });

export const publishResponseSchema = z.object({
  name: z.string(),
  version: z.string(),
  digest,
  size: z.number().int().min(0),
  attestation: jsonObject,
  renamedTools: z.array(renamedTool),
  status: versionStatus,
  storedAt: instant,
  logIndex,
  inclusionProof: inclusionProofDto,
  tlogProof: z.string().describe('C2SP tlog-proof text'),
  url: z.string(),
});

export const manifestListResponseSchema = z.object({
  items: z.array(
    z.object({
      name: z.string(),
      latestVersion: z.string(),
      digest: z.string(),
      status: versionStatus,
      storedAt: instant,
      publisher: z.string(),
      url: z.string(),
    }),
  ),
  nextCursor: z.string().nullable(),
});

export const versionListResponseSchema = z.object({
  name: z.string(),
  versions: z.array(
    z.object({
      version: z.string(),
      digest: z.string(),
      status: versionStatus,
      storedAt: instant,
      yankReason: z.string().nullable().optional(),
      yankedAt: z.string().nullable().optional(),
    }),
  ),
});

export const yankRequestSchema = z.object({ reason: z.string() });

export const yankResponseSchema = z.object({
  name: z.string(),
  version: z.string(),
  digest: z.string(),
  status: versionStatus,
  yankReason: z.string().nullable(),
  yankedAt: z.string().nullable(),
  yankLogIndex: logIndex.nullable(),
  alreadyYanked: z.boolean().optional(),
  requestedReason: z.string().optional(),
});

export const bindingsResponseSchema = z.object({
  digest: z.string(),
  bindings: z.array(
    z.object({
      name: z.string(),
      version: z.string(),
      publisher: z.string(),
      storedAt: instant,
      kid: z.string(),
      status: versionStatus,
      yankReason: z.string().nullable().optional(),
      logIndex,
      attestation: jsonObject,
      inclusionProof: inclusionProofDto,
      tlogProof: z.string(),
      bundle: z.string(),
    }),
  ),
});

export const healthResponseSchema = z.object({
  status: z.literal('ok'),
  logSize: z.number().int().min(0),
  activeKid: z.string(),
  sequencer: z.enum(['sequencer', 'follower']).optional(),
  witnesses: z
    .array(
      z.object({
        name: z.string(),
        cosignedSize: z.number().int().min(0).nullable(),
        behindBy: z.number().int().nullable(),
        consecutiveFailures: z.number().int().min(0),
        lastError: z.string().nullable(),
      }),
    )
    .optional(),
});

/** RFC 7517 §5 JWK Set: Ed25519 attestation keys (RFC 8037) and the P-256 bundle keys, each with its validity. */
export const jwksSchema = z.object({
  keys: z.array(z.object({ kty: z.string(), kid: z.string() }).catchall(z.unknown())),
});

export const inclusionProofResponseSchema = z.object({
  index: logIndex,
  size: z.number().int().min(0),
  hashes: z.array(z.string()),
});

export const consistencyProofResponseSchema = z.object({
  from: z.number().int().min(0),
  to: z.number().int().min(0),
  hashes: z.array(z.string()),
});

export const whoamiResponseSchema = z.object({
  kind: z.enum(['publisher', 'operator', 'host']),
  name: z.string(),
});

export const approvalCreatedResponseSchema = z.object({
  id: z.string(),
  digest,
  status: approvalStatus,
  expiresAt: instant,
  url: z.string(),
});

const approvalSummaryShape = {
  id: z.string(),
  digest,
  status: approvalStatus,
  createdAt: instant,
  expiresAt: instant,
  decidedBy: z.string().optional(),
  decidedAt: instant.optional(),
  reason: z.string().optional(),
  consumedAt: instant.optional(),
  decisionLogIndex: logIndex.optional(),
  consumptionLogIndex: logIndex.optional(),
};

export const approvalResponseSchema = z.object({
  ...approvalSummaryShape,
  envelope: jsonObject,
  tool: jsonObject,
  material: jsonObject,
  commitmentSalt: z.string(),
});

export const approvalListResponseSchema = z.object({ items: z.array(z.object(approvalSummaryShape)) });

export const approvalDecisionRequestSchema = z.object({
  decision: z.enum(['approve', 'deny']),
  digest: z.string(),
  reason: z.string().optional(),
});

export const approvalTransitionResponseSchema = z.object({ id: z.string(), digest, status: approvalStatus, logIndex });

/** The action envelope a host sends to ask for (and to consume) an approval (docs/approvals.md): a closed object. */
export const actionEnvelopeSchema = z.object({
  type: z.literal('toolseal.action/v1'),
  registry: z.string(),
  manifest: z.string().describe('name@version'),
  manifestDigest: z.string(),
  tool: z.string(),
  toolDigest: z.string(),
  audience: z.string().describe('the calling host'),
  arguments: z.record(z.string(), z.unknown()).describe('the call arguments as the call sent them'),
});

// ── the MCP Registry read API (/v0.1; the official document describes these in full) ──

const officialServerResponse = z.object({
  server: jsonObject.describe('the server.json detail, from the signed manifest'),
  _meta: z
    .object({
      'io.modelcontextprotocol.registry/official': z.object({
        status: z.enum(['active', 'deprecated']),
        publishedAt: instant,
        updatedAt: instant,
        isLatest: z.boolean(),
      }),
      'dev.toolseal/signed-manifest': jsonObject,
    })
    .catchall(z.unknown()),
});

export const officialServerResponseSchema = officialServerResponse;
export const officialServerListSchema = z.object({
  servers: z.array(officialServerResponse),
  metadata: z.object({ nextCursor: z.string().optional(), count: z.number().int().min(0) }),
});
export const officialNotFoundSchema = z.object({ error: z.string() });

// ── compile-time agreement with wire.ts ──

/** True when a schema's output and the wire type are assignable both ways (a compile error otherwise). */
type Agrees<S extends z.ZodType, T> = [z.output<S>] extends [T] ? ([T] extends [z.output<S>] ? true : false) : false;
function agreesWith<S extends z.ZodType, T>(_check: Agrees<S, T>): void {}

agreesWith<typeof publishResponseSchema, PublishResponse>(true);
agreesWith<typeof manifestListResponseSchema, ManifestListResponse>(true);
agreesWith<typeof versionListResponseSchema, VersionListResponse>(true);
agreesWith<typeof yankRequestSchema, YankRequest>(true);
agreesWith<typeof yankResponseSchema, YankResponse>(true);
agreesWith<typeof bindingsResponseSchema, BindingsResponse>(true);
agreesWith<typeof healthResponseSchema, HealthResponse>(true);
agreesWith<typeof inclusionProofResponseSchema, InclusionProofResponse>(true);
agreesWith<typeof consistencyProofResponseSchema, ConsistencyProofResponse>(true);
agreesWith<typeof whoamiResponseSchema, WhoamiResponse>(true);
agreesWith<typeof approvalCreatedResponseSchema, ApprovalCreatedResponse>(true);
agreesWith<typeof approvalResponseSchema, ApprovalResponse>(true);
agreesWith<typeof approvalListResponseSchema, ApprovalListResponse>(true);
agreesWith<typeof approvalDecisionRequestSchema, ApprovalDecisionRequest>(true);
agreesWith<typeof approvalTransitionResponseSchema, ApprovalTransitionResponse>(true);
agreesWith<typeof renamedTool, RenamedTool>(true);
agreesWith<typeof approvalStatus, ApprovalStatus>(true);
