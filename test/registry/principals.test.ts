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

async function refusal(run: () => unknown, code: ErrorCode): Promise<ToolsealError> {
  let caught: unknown;
  try {
    await run();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ToolsealError);
  expect((caught as ToolsealError).code, (caught as ToolsealError).message).toBe(code);
  return caught as ToolsealError;
}

describe('operators and hosts', () => {
  it('get a prefixed token shown once; only its hash is stored, anywhere in the database files', async () => {
    const t = await createTestEnv({ onDisk: true });
    const operator = await createPrincipal(t.store, 'operator', 'alice');
    const host = await createPrincipal(t.store, 'host', 'build-01.ci');
    expect(operator.token).toMatch(/^tso_[A-Za-z0-9_-]{43}$/);
    expect(host.token).toMatch(/^tsh_[A-Za-z0-9_-]{43}$/);
    expect(operator.principal).toMatchObject({ kind: 'operator', name: 'alice', revokedAt: null });
    expect(operator.principal.tokenHash).toBe(hashToken(operator.token));
    await t.close();
    const files = readAllFiles(t.dataDir);
    for (const token of [operator.token, host.token]) expect(files.includes(Buffer.from(token))).toBe(false);
    expect(files.includes(Buffer.from(hashToken(host.token)))).toBe(true);
  });

  it('names follow the rule and are unique per kind (an operator and a host may share one)', async () => {
    const t = await createTestEnv();
    for (const name of ['', 'Alice', '-x', 'a b', 'a'.repeat(65), 'é', 'a/b']) {
      await refusal(() => createPrincipal(t.store, 'host', name), 'BAD_REQUEST');
    }
    await createPrincipal(t.store, 'host', 'a'.repeat(64));
    await createPrincipal(t.store, 'host', 'x');
    await refusal(() => createPrincipal(t.store, 'host', 'x'), 'NAMESPACE_TAKEN');
    await createPrincipal(t.store, 'operator', 'x');
    expect((await t.store.listPrincipals('host')).map((p) => p.name)).toEqual(['a'.repeat(64), 'x']);
    await t.close();
  });

  it('authenticate as the kind a route needs: another kind or a publisher FORBIDDEN, unknown UNAUTHENTICATED', async () => {
    const t = await createTestEnv();
    const operator = await createPrincipal(t.store, 'operator', 'alice');
    const host = await createPrincipal(t.store, 'host', 'host-a');
    expect((await authenticatePrincipal(t.store, host.token, 'host')).id).toBe(host.principal.id);
    expect((await authenticatePrincipal(t.store, operator.token, 'operator')).id).toBe(operator.principal.id);
    await refusal(() => authenticatePrincipal(t.store, host.token, 'operator'), 'FORBIDDEN');
    await refusal(() => authenticatePrincipal(t.store, operator.token, 'host'), 'FORBIDDEN');
    await refusal(() => authenticatePrincipal(t.store, t.token, 'host'), 'FORBIDDEN');
    await refusal(() => authenticateAnyPrincipal(t.store, t.token), 'FORBIDDEN');
    await refusal(() => authenticatePrincipal(t.store, 'tsh_unknown', 'host'), 'UNAUTHENTICATED');
    await refusal(() => authenticatePrincipal(t.store, undefined, 'host'), 'UNAUTHENTICATED');
    await refusal(() => authenticatePrincipal(t.store, '', 'host'), 'UNAUTHENTICATED');
    expect((await authenticateAnyPrincipal(t.store, host.token)).kind).toBe('host');
    expect((await authenticateAnyPrincipal(t.store, operator.token)).kind).toBe('operator');
    expect(await identifyToken(t.store, t.token)).toEqual({ kind: 'publisher', name: 'io.github.acme' });
    expect(await identifyToken(t.store, operator.token)).toEqual({ kind: 'operator', name: 'alice' });
    expect(await identifyToken(t.store, host.token)).toEqual({ kind: 'host', name: 'host-a' });
    await refusal(() => identifyToken(t.store, 'nope'), 'UNAUTHENTICATED');
    await t.close();
  });

  it('a revocation from another connection holds at once; revoking again keeps the first time', async () => {
    const t = await createTestEnv({ onDisk: true });
    const host = await createPrincipal(t.store, 'host', 'host-a');
    const other = openStore({ dataDir: t.dataDir });
    const first = await revokePrincipal(other, 'host', 'host-a');
    expect(first).toMatchObject({ kind: 'host', name: 'host-a', alreadyRevoked: false });
    expect(await revokePrincipal(other, 'host', 'host-a')).toEqual({ ...first, alreadyRevoked: true });
    await refusal(() => revokePrincipal(other, 'operator', 'host-a'), 'NOT_FOUND');
    await other.close();
    await refusal(() => authenticatePrincipal(t.store, host.token, 'host'), 'UNAUTHENTICATED');
    await refusal(() => identifyToken(t.store, host.token), 'UNAUTHENTICATED');
    const listed = await listPrincipals(t.store, 'host');
    expect(listed).toEqual([
      { name: 'host-a', createdAt: host.principal.createdAt, revoked: true, revokedAt: first.revokedAt },
    ]);
    expect(JSON.stringify(listed)).not.toContain(host.principal.tokenHash);
    await t.close();
  });
});
