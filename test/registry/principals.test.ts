// Operators and hosts (src/registry/principals.ts, issue 13 §3): a token shown once and stored only as its SHA-256,
// names unique per kind, a token of another kind FORBIDDEN, unknown or revoked UNAUTHENTICATED (at once, also from
// another connection), whoami for every kind, listings without tokens.

import { afterAll, describe, expect, it } from 'vitest';
import { ToolsealError, type ErrorCode } from '../../src/core/errors.ts';
import { hashToken } from '../../src/registry/publishers.ts';
import {
  authenticateAnyPrincipal,
  authenticatePrincipal,
  createPrincipal,
  identifyToken,
  listPrincipals,
  revokePrincipal,
} from '../../src/registry/principals.ts';
import { openStore } from '../../src/store/sqlite/index.ts';
import { cleanupTempDirs, createTestEnv, readAllFiles } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

function refusal(run: () => unknown, code: ErrorCode): ToolsealError {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ToolsealError);
  expect((caught as ToolsealError).code, (caught as ToolsealError).message).toBe(code);
  return caught as ToolsealError;
}

describe('operators and hosts', () => {
  it('get a prefixed token shown once; only its hash is stored, anywhere in the database files', () => {
    const t = createTestEnv({ onDisk: true });
    const operator = createPrincipal(t.store, 'operator', 'alice');
    const host = createPrincipal(t.store, 'host', 'build-01.ci');
    expect(operator.token).toMatch(/^tso_[A-Za-z0-9_-]{43}$/);
    expect(host.token).toMatch(/^tsh_[A-Za-z0-9_-]{43}$/);
    expect(operator.principal).toMatchObject({ kind: 'operator', name: 'alice', revokedAt: null });
    expect(operator.principal.tokenHash).toBe(hashToken(operator.token));
    t.close();
    const files = readAllFiles(t.dataDir);
    for (const token of [operator.token, host.token]) expect(files.includes(Buffer.from(token))).toBe(false);
    expect(files.includes(Buffer.from(hashToken(host.token)))).toBe(true);
  });

  it('names follow the rule and are unique per kind (an operator and a host may share one)', () => {
    const t = createTestEnv();
    for (const name of ['', 'Alice', '-x', 'a b', 'a'.repeat(65), 'é', 'a/b']) {
      refusal(() => createPrincipal(t.store, 'host', name), 'BAD_REQUEST');
    }
    createPrincipal(t.store, 'host', 'a'.repeat(64));
    createPrincipal(t.store, 'host', 'x');
    refusal(() => createPrincipal(t.store, 'host', 'x'), 'NAMESPACE_TAKEN');
    createPrincipal(t.store, 'operator', 'x');
    expect(t.store.listPrincipals('host').map((p) => p.name)).toEqual(['a'.repeat(64), 'x']);
    t.close();
  });

  it('authenticate as the kind a route needs: another kind or a publisher FORBIDDEN, unknown UNAUTHENTICATED', () => {
    const t = createTestEnv();
    const operator = createPrincipal(t.store, 'operator', 'alice');
    const host = createPrincipal(t.store, 'host', 'host-a');
    expect(authenticatePrincipal(t.store, host.token, 'host').id).toBe(host.principal.id);
    expect(authenticatePrincipal(t.store, operator.token, 'operator').id).toBe(operator.principal.id);
    refusal(() => authenticatePrincipal(t.store, host.token, 'operator'), 'FORBIDDEN');
    refusal(() => authenticatePrincipal(t.store, operator.token, 'host'), 'FORBIDDEN');
    refusal(() => authenticatePrincipal(t.store, t.token, 'host'), 'FORBIDDEN');
    refusal(() => authenticateAnyPrincipal(t.store, t.token), 'FORBIDDEN');
    refusal(() => authenticatePrincipal(t.store, 'tsh_unknown', 'host'), 'UNAUTHENTICATED');
    refusal(() => authenticatePrincipal(t.store, undefined, 'host'), 'UNAUTHENTICATED');
    refusal(() => authenticatePrincipal(t.store, '', 'host'), 'UNAUTHENTICATED');
    expect(authenticateAnyPrincipal(t.store, host.token).kind).toBe('host');
    expect(authenticateAnyPrincipal(t.store, operator.token).kind).toBe('operator');
    expect(identifyToken(t.store, t.token)).toEqual({ kind: 'publisher', name: 'io.github.acme' });
    expect(identifyToken(t.store, operator.token)).toEqual({ kind: 'operator', name: 'alice' });
    expect(identifyToken(t.store, host.token)).toEqual({ kind: 'host', name: 'host-a' });
    refusal(() => identifyToken(t.store, 'nope'), 'UNAUTHENTICATED');
    t.close();
  });

  it('a revocation from another connection holds at once; revoking again keeps the first time', () => {
    const t = createTestEnv({ onDisk: true });
    const host = createPrincipal(t.store, 'host', 'host-a');
    const other = openStore({ dataDir: t.dataDir });
    const first = revokePrincipal(other, 'host', 'host-a');
    expect(first).toMatchObject({ kind: 'host', name: 'host-a', alreadyRevoked: false });
    expect(revokePrincipal(other, 'host', 'host-a')).toEqual({ ...first, alreadyRevoked: true });
    refusal(() => revokePrincipal(other, 'operator', 'host-a'), 'NOT_FOUND');
    other.close();
    refusal(() => authenticatePrincipal(t.store, host.token, 'host'), 'UNAUTHENTICATED');
    refusal(() => identifyToken(t.store, host.token), 'UNAUTHENTICATED');
    const listed = listPrincipals(t.store, 'host');
    expect(listed).toEqual([
      { name: 'host-a', createdAt: host.principal.createdAt, revoked: true, revokedAt: first.revokedAt },
    ]);
    expect(JSON.stringify(listed)).not.toContain(host.principal.tokenHash);
    t.close();
  });
});
