// Publishers and their bearer tokens (RFC 6750): a token is 32 random bytes, shown once; only its SHA-256 is stored.

import { createHash, randomBytes } from 'node:crypto';
import { ToolsealError } from '../core/errors.ts';
import { NAMESPACE_PATTERN } from '../protocol/manifest-ref.ts';
import type { PublisherRecord, Store } from '../store/index.ts';

const TOKEN_PREFIX = 'tsk_';

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Create a publisher owning `namespace` (unique case-insensitively). The token is returned once; only its hash is stored. */
export function createPublisher(
  store: Store,
  namespace: string,
  clock: () => Date = () => new Date(),
): { publisher: PublisherRecord; token: string } {
  if (!NAMESPACE_PATTERN.test(namespace)) {
    throw new ToolsealError('BAD_REQUEST', 'namespace must be reverse-DNS in lowercase ASCII, e.g. io.github.acme');
  }
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const publisher = store.insertPublisher(namespace, hashToken(token), clock().toISOString());
  return { publisher, token };
}
