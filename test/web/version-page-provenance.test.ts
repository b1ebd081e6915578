// Issue 28 §3: the version page shows how the publish was authorised, from the signed predicate's provenance, as
// escaped text; an attestation without provenance says so.

import { afterAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline/index.ts';
import { cleanupTempDirs, createTestEnv, manifestBytes } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

describe('version page: provenance', () => {
  it('an OIDC publish reads "published by REPO, workflow FILE at SHA"; vendor text is escaped; none says not recorded', async () => {
    const env = await createTestEnv();
    const oidc = {
      ...env.publisher,
      provenance: {
        method: 'oidc' as const,
        issuer: 'https://token.actions.githubusercontent.com',
        subject: 'repo:acme/payments-mcp:ref:refs/tags/v1.0.0',
        claims: {
          repository: 'acme/<b>payments</b>',
          workflow_ref: 'acme/payments-mcp/.github/workflows/release.yml@refs/tags/v1.0.0',
          sha: '3f2a1b9c0d4e5f60718293a4b5c6d7e8f9012345',
        },
      },
    };
    await env.registry.publish(manifestBytes({ version: '1.0.0' }), async () => oidc);
    await env.registry.publish(manifestBytes({ version: '1.1.0' }), env.publisher);
    const page = await (await env.app.request('/ui/manifests/io.github.acme/widgets/1.0.0')).text();
    expect(env.unexpectedErrors).toEqual([]);
    expect(page).toContain(
      '<dd class="provenance">published by acme/&lt;b&gt;payments&lt;/b&gt;, workflow release.yml at 3f2a1b9c</dd>',
    );
    const plain = await (await env.app.request('/ui/manifests/io.github.acme/widgets/1.1.0')).text();
    expect(plain).toContain('<dd class="provenance">not recorded</dd>');
    expect(runPipeline(manifestBytes({ version: '1.0.0' })).name).toBe('io.github.acme/widgets');
    await env.close();
  });
});
