// Operators and hosts (issue 13 §3, docs/approvals.md), the approval service's principals beside publishers, with
// bearer tokens as in RFC 6750: 32 random bytes shown once, only the SHA-256 stored (publishers.ts's hashToken). A token
// is looked up per request and checked again inside every write transaction, so a revocation holds at once.

import { randomBytes, timingSafeEqual } from 'node:crypto';
import { ToolsealError } from '../core/errors.ts';
import type { WhoamiResponse } from '../protocol/wire.ts';
import type { PrincipalKind, PrincipalRecord, Store } from '../store/index.ts';
import { authenticatePublisher, hashToken } from './publishers.ts';

export type { PrincipalKind, PrincipalRecord } from '../store/index.ts';

/** An operator's or a host's name: lowercase ASCII, digits, `.`, `_`, `-`; unique per kind. */
export const PRINCIPAL_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

const TOKEN_PREFIXES: Record<PrincipalKind, string> = { operator: 'tso_', host: 'tsh_' };

/** Create an operator or a host called `name`. The token is returned once; only its hash is stored. */
export async function createPrincipal(
  store: Store,
  kind: PrincipalKind,
  name: string,
  clock: () => Date = () => new Date(),
): Promise<{ principal: PrincipalRecord; token: string }> {
  if (!PRINCIPAL_NAME_PATTERN.test(name)) {
    throw new ToolsealError(
      'BAD_REQUEST',
      `${describeKind(kind)} name is 1 to 64 of a-z, 0-9, '.', '_', '-', starting with a letter or digit`,
    );
  }
  const token = TOKEN_PREFIXES[kind] + randomBytes(32).toString('base64url');
  const principal = await store.insertPrincipal(kind, name, hashToken(token), clock().toISOString());
  return { principal, token };
}

/**
 * The principal of kind `kind` a bearer token belongs to: none or an unknown token is UNAUTHENTICATED, a valid token
 * of another kind (or a publisher's) FORBIDDEN, a revoked principal UNAUTHENTICATED.
 */
export async function authenticatePrincipal(
  store: Store,
  token: string | undefined,
  kind: PrincipalKind,
): Promise<PrincipalRecord> {
  if (token === undefined || token === '') {
    throw new ToolsealError(
      'UNAUTHENTICATED',
      `${describeKind(kind)} token is required: Authorization: Bearer <token>`,
    );
  }
  const principal = await findByToken(store, token);
  if (principal === undefined) {
    if (await isPublisherToken(store, token)) throw wrongKind(kind);
    throw new ToolsealError('UNAUTHENTICATED', 'the token is not valid');
  }
  if (principal.revokedAt !== null) throw revokedError(principal.kind);
  if (principal.kind !== kind) throw wrongKind(kind);
  return principal;
}

/** Either kind: for routes both an operator and a host may read. */
export async function authenticateAnyPrincipal(store: Store, token: string | undefined): Promise<PrincipalRecord> {
  if (token === undefined || token === '') {
    throw new ToolsealError('UNAUTHENTICATED', 'an operator or host token is required: Authorization: Bearer <token>');
  }
  const principal = await findByToken(store, token);
  if (principal === undefined) {
    if (await isPublisherToken(store, token))
      throw new ToolsealError('FORBIDDEN', 'this route needs an operator or host token');
    throw new ToolsealError('UNAUTHENTICATED', 'the token is not valid');
  }
  if (principal.revokedAt !== null) throw revokedError(principal.kind);
  return principal;
}

/** Who a token of any kind (publisher, operator, host) belongs to; UNAUTHENTICATED for none, unknown or revoked. */
export async function identifyToken(store: Store, token: string | undefined): Promise<WhoamiResponse> {
  if (token !== undefined && token !== '') {
    const principal = await findByToken(store, token);
    if (principal !== undefined) {
      if (principal.revokedAt !== null) throw revokedError(principal.kind);
      return { kind: principal.kind, name: principal.name };
    }
  }
  return { kind: 'publisher', name: (await authenticatePublisher(store, token)).namespace };
}

/**
 * Refuse a write by `principal` (authenticated earlier in the request) revoked since. Reads only: call it inside the
 * write's transaction.
 */
export async function assertPrincipalCurrent(store: Store, principal: PrincipalRecord): Promise<void> {
  const current = await store.findPrincipalById(principal.id);
  if (!current || current.tokenHash !== principal.tokenHash || current.kind !== principal.kind) {
    throw new ToolsealError('UNAUTHENTICATED', 'the token is not valid');
  }
  if (current.revokedAt !== null) throw revokedError(current.kind);
}

/** What `operator list` and `host list` show: never a token or its hash. */
export interface PrincipalSummary {
  name: string;
  createdAt: string;
  revoked: boolean;
  revokedAt: string | null;
}

export async function listPrincipals(store: Store, kind: PrincipalKind): Promise<PrincipalSummary[]> {
  return (await store.listPrincipals(kind)).map((principal) => ({
    name: principal.name,
    createdAt: principal.createdAt,
    revoked: principal.revokedAt !== null,
    revokedAt: principal.revokedAt,
  }));
}

/** Revoke the `kind` called `name`: its token is refused from now on. Again keeps the first time and says so. */
export async function revokePrincipal(
  store: Store,
  kind: PrincipalKind,
  name: string,
  clock: () => Date = () => new Date(),
): Promise<{ kind: PrincipalKind; name: string; revokedAt: string; alreadyRevoked: boolean }> {
  return await store.transaction(async () => {
    const principal = await store.findPrincipal(kind, name);
    if (!principal) throw new ToolsealError('NOT_FOUND', `no ${kind} called ${JSON.stringify(name)}`);
    if (principal.revokedAt !== null) return { kind, name, revokedAt: principal.revokedAt, alreadyRevoked: true };
    const revokedAt = clock().toISOString();
    await store.revokePrincipal(principal.id, revokedAt);
    return { kind, name, revokedAt, alreadyRevoked: false };
  });
}

/** The principal whose stored hash is the token's, compared in constant time. */
async function findByToken(store: Store, token: string): Promise<PrincipalRecord | undefined> {
  const presented = hashToken(token);
  const principal = await store.findPrincipalByTokenHash(presented);
  if (!principal) return undefined;
  return timingSafeEqual(Buffer.from(principal.tokenHash, 'hex'), Buffer.from(presented, 'hex'))
    ? principal
    : undefined;
}

async function isPublisherToken(store: Store, token: string): Promise<boolean> {
  return (await store.findPublisherByTokenHash(hashToken(token))) !== undefined;
}

function wrongKind(kind: PrincipalKind): ToolsealError {
  return new ToolsealError('FORBIDDEN', `this route needs ${describeKind(kind)} token`);
}

function revokedError(kind: PrincipalKind): ToolsealError {
  return new ToolsealError('UNAUTHENTICATED', `the ${kind} of this token has been revoked`);
}

function describeKind(kind: PrincipalKind): string {
  return kind === 'operator' ? 'an operator' : 'a host';
}
