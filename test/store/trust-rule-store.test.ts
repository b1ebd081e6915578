// The trust-rule role of the store (issue 28 §1, §4; src/store/trust-rules-port.ts) on every backend: rules in force
// per namespace in insertion order, exact claims round-tripped, removal kept as a record, namespace verification
// upserted. SQLite (memory and file) and PostgreSQL (the test server when set, else PGlite).

import { afterAll, describe, expect, it } from 'vitest';
import { openTrustRuleStore } from '../../src/store/trust-rule-store-of.ts';
import { cleanupTempDirs } from '../helpers/registry-helpers.ts';
import { contractBackends, extraPgliteBackend } from './contract/store-backends.ts';

afterAll(cleanupTempDirs);

const backends = extraPgliteBackend === undefined ? contractBackends : [...contractBackends, extraPgliteBackend];

describe.each(backends)('trust rules on $name', (backend) => {
  it('adds, lists in order, removes (kept with its time) and records namespace verification', async () => {
    const opened = await backend.open();
    try {
      const rules = openTrustRuleStore(opened.store);
      expect(await rules.listAllTrustRules()).toEqual([]);
      const base = {
        issuer: 'https://token.actions.githubusercontent.com',
        audience: 'https://registry.example',
        refClaims: { workflow_ref: 'acme/payments-mcp/.github/workflows/release.yml' },
        oidcOnly: false,
        createdAt: '2026-12-06T05:00:00.000Z',
      };
      const first = await rules.insertTrustRule({
        ...base,
        namespace: 'io.github.acme',
        claims: { repository: 'acme/payments-mcp', repository_owner_id: '4242' },
      });
      const second = await rules.insertTrustRule({
        ...base,
        namespace: 'io.github.acme',
        claims: { repository: 'acme/Ünïcode "quoted"' },
        oidcOnly: true,
      });
      const other = await rules.insertTrustRule({ ...base, namespace: 'com.example', claims: { sub: 'x' } });
      expect(first).toEqual({
        ...base,
        id: first.id,
        namespace: 'io.github.acme',
        claims: { repository: 'acme/payments-mcp', repository_owner_id: '4242' },
        removedAt: null,
      });
      expect(second.id).toBeGreaterThan(first.id);
      expect((await rules.listTrustRules('io.github.acme')).map((rule) => rule.id)).toEqual([first.id, second.id]);
      expect((await rules.listTrustRules('io.github.acme'))[1]).toEqual(second);
      expect(second.claims).toEqual({ repository: 'acme/Ünïcode "quoted"' });
      expect(second.oidcOnly).toBe(true);
      expect(await rules.listTrustRules('IO.GITHUB.ACME')).toEqual([]);
      expect((await rules.listAllTrustRules()).map((rule) => rule.id)).toEqual([other.id, first.id, second.id]);

      expect(await rules.removeTrustRule('com.example', first.id, '2026-12-06T06:00:00.000Z')).toBeUndefined();
      const removed = await rules.removeTrustRule('io.github.acme', first.id, '2026-12-06T06:00:00.000Z');
      expect(removed).toEqual({ ...first, removedAt: '2026-12-06T06:00:00.000Z' });
      expect(await rules.removeTrustRule('io.github.acme', first.id, '2026-12-06T07:00:00.000Z')).toBeUndefined();
      expect((await rules.listTrustRules('io.github.acme')).map((rule) => rule.id)).toEqual([second.id]);
      const kept = await opened.raw('SELECT removed_at AS "removedAt" FROM trust_rules WHERE id = $1', [first.id]);
      expect(kept).toEqual([{ removedAt: '2026-12-06T06:00:00.000Z' }]);

      expect(await rules.findNamespaceVerification('com.example')).toBeUndefined();
      await rules.saveNamespaceVerification({
        namespace: 'com.example',
        unverified: false,
        domain: 'example.com',
        provenAt: 'T1',
      });
      await rules.saveNamespaceVerification({
        namespace: 'io.github.x',
        unverified: true,
        domain: null,
        provenAt: null,
      });
      expect(await rules.findNamespaceVerification('com.example')).toEqual({
        namespace: 'com.example',
        unverified: false,
        domain: 'example.com',
        provenAt: 'T1',
      });
      await rules.saveNamespaceVerification({
        namespace: 'com.example',
        unverified: true,
        domain: null,
        provenAt: null,
      });
      expect(await rules.findNamespaceVerification('com.example')).toEqual({
        namespace: 'com.example',
        unverified: true,
        domain: null,
        provenAt: null,
      });
      expect(await rules.findNamespaceVerification('io.github.x')).toMatchObject({ unverified: true });

      // Read together, a namespace's trust is exactly what the two separate reads answer, in every state: rules and a
      // verification (com.example), a verification alone (io.github.x), rules alone, a removed rule left out
      // (io.github.acme), nothing at all, and a case that differs (namespaces are compared exactly).
      await rules.insertTrustRule({ ...base, namespace: 'com.example', claims: { sub: 'y', 'a"b': 'Ü' } });
      for (const namespace of ['com.example', 'io.github.x', 'io.github.acme', 'org.nobody', 'COM.EXAMPLE']) {
        expect(await rules.loadNamespaceTrust(namespace)).toEqual({
          rules: await rules.listTrustRules(namespace),
          verification: await rules.findNamespaceVerification(namespace),
        });
      }
      const together = await rules.loadNamespaceTrust('com.example');
      expect(together.rules.map((rule) => rule.claims)).toEqual([{ sub: 'x' }, { sub: 'y', 'a"b': 'Ü' }]);
      expect(together.verification).toEqual({
        namespace: 'com.example',
        unverified: true,
        domain: null,
        provenAt: null,
      });
      expect(await rules.loadNamespaceTrust('io.github.acme')).toEqual({ rules: [second], verification: undefined });
      expect(await rules.loadNamespaceTrust('org.nobody')).toEqual({ rules: [], verification: undefined });
    } finally {
      await opened.cleanup();
    }
  }, 120_000);
});
