// Publishers and their bearer tokens (RFC 6750): a token is 32 random bytes, shown once; only its SHA-256 is stored.
// A token is looked up per request (nothing caches it), and checked again inside every write transaction, so a
// revoked publisher or a rotated-out token is refused at once, by every connection and thread.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ToolsealError } from '../core/errors.ts';
import { NAMESPACE_PATTERN } from '../protocol/manifest-ref.ts';
import type { PublisherRecord, Store } from '../store/index.ts';

const TOKEN_PREFIX = 'tsk_';

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** Create a publisher owning `namespace` (unique case-insensitively). The token is returned once; only its hash is stored. */
export async function createPublisher(
  store: Store,
  namespace: string,
  clock: () => Date = () => new Date(),
): Promise<{ publisher: PublisherRecord; token: string }> {
  if (!NAMESPACE_PATTERN.test(namespace)) {
    throw new ToolsealError('BAD_REQUEST', 'namespace must be reverse-DNS in lowercase ASCII, e.g. io.github.acme');
  }
  const token = generateToken();
  const publisher = await store.insertPublisher(namespace, hashToken(token), clock().toISOString());
  return { publisher, token };
}

/**
 * The publisher a bearer token belongs to. Only the token's SHA-256 is looked up, the stored hash is compared in
 * constant time, and a revoked publisher is refused.
 */
export async function authenticatePublisher(store: Store, token: string | undefined): Promise<PublisherRecord> {
  if (token === undefined || token === '') {
    throw new ToolsealError('UNAUTHENTICATED', 'a publisher token is required: Authorization: Bearer <token>');
  }
  const presented = hashToken(token);
  const publisher = await store.findPublisherByTokenHash(presented);
  if (!publisher || !timingSafeEqual(Buffer.from(publisher.tokenHash, 'hex'), Buffer.from(presented, 'hex'))) {
    throw new ToolsealError('UNAUTHENTICATED', 'the publisher token is not valid');
  }
  if (isRevoked(publisher)) throw revokedError();
  return publisher;
}

/**
 * Refuse a write by `publisher` (authenticated earlier, maybe on another thread) whose token has since been rotated
 * out or whose publisher has been revoked. Reads only: call it inside the write's transaction.
 */
export async function assertPublisherCurrent(store: Store, publisher: PublisherRecord): Promise<void> {
  const current = await store.findPublisherById(publisher.id);
  if (!current || current.tokenHash !== publisher.tokenHash) {
    throw new ToolsealError('UNAUTHENTICATED', 'the publisher token is not valid');
  }
  if (isRevoked(current)) throw revokedError();
}

/** What `publisher list` shows of a publisher: never its token or the token's hash. */
export interface PublisherSummary {
  namespace: string;
  createdAt: string;
  revoked: boolean;
  revokedAt: string | null;
}

export async function listPublishers(store: Store): Promise<PublisherSummary[]> {
  return (await store.listPublishers()).map((publisher) => ({
    namespace: publisher.namespace,
    createdAt: publisher.createdAt,
    revoked: isRevoked(publisher),
    revokedAt: publisher.revokedAt ?? null,
  }));
}

/**
 * Revoke the publisher of `namespace`: its token is refused from now on (its manifests stay served). Revoking again
 * keeps the first time and says so. NOT_FOUND for a namespace without a publisher.
 */
export async function revokePublisher(
  store: Store,
  namespace: string,
  clock: () => Date = () => new Date(),
): Promise<{ namespace: string; revokedAt: string; alreadyRevoked: boolean }> {
  return await store.transaction(async () => {
    const publisher = await findPublisherOf(store, namespace);
    if (publisher.revokedAt) {
      return { namespace: publisher.namespace, revokedAt: publisher.revokedAt, alreadyRevoked: true };
    }
    const revokedAt = clock().toISOString();
    await store.revokePublisher(publisher.id, revokedAt);
    return { namespace: publisher.namespace, revokedAt, alreadyRevoked: false };
  });
}

/**
 * Give the publisher of `namespace` a new token and refuse the old one from now on. The new token is returned once
 * (only its hash is stored). A revoked publisher stays revoked: BAD_REQUEST.
 */
export async function rotatePublisherToken(
  store: Store,
  namespace: string,
): Promise<{ namespace: string; token: string }> {
  return await store.transaction(async () => {
    const publisher = await findPublisherOf(store, namespace);
    if (isRevoked(publisher)) {
      throw new ToolsealError(
        'BAD_REQUEST',
        `the publisher of ${publisher.namespace} is revoked; it gets no new token`,
      );
    }
    const token = generateToken();
    await store.replacePublisherTokenHash(publisher.id, hashToken(token));
    return { namespace: publisher.namespace, token };
  });
}

async function findPublisherOf(store: Store, namespace: string): Promise<PublisherRecord> {
  const publisher = await store.findPublisherByNamespace(namespace);
  if (!publisher) throw new ToolsealError('NOT_FOUND', `no publisher owns ${JSON.stringify(namespace)}`);
  return publisher;
}

function isRevoked(publisher: PublisherRecord): boolean {
  return publisher.revokedAt !== undefined && publisher.revokedAt !== null;
}

function revokedError(): ToolsealError {
  return new ToolsealError('UNAUTHENTICATED', 'the publisher of this token has been revoked');
}
