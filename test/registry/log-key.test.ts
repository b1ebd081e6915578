// The log key is created with the log and never silently replaced: a missing key for a log with entries is refused.

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { openRegistry } from '../../src/registry/index.ts';
import { openStore } from '../../src/store/sqlite/index.ts';

const root = mkdtempSync(join(tmpdir(), 'toolseal-logkey-'));
afterAll(async () => rmSync(root, { recursive: true, force: true }));

describe('log key', () => {
  it('is created on first start, reused after, and refused (INTERNAL, no new key written) when missing for an existing log', async () => {
    const dataDir = join(root, 'data');
    const keysDir = join(root, 'keys');
    const first = openStore({ dataDir });
    const verifier = (await openRegistry({ store: first, keysDir, origin: 'http://127.0.0.1:1' })).log.verifierString;
    await first.close();

    const again = openStore({ dataDir });
    expect((await openRegistry({ store: again, keysDir, origin: 'http://127.0.0.1:1' })).log.verifierString).toBe(
      verifier,
    );
    await again.close();

    rmSync(join(keysDir, 'log.private.jwk.json'));
    const reopened = openStore({ dataDir });
    let refusal: unknown;
    try {
      await openRegistry({ store: reopened, keysDir, origin: 'http://127.0.0.1:1' });
    } catch (error) {
      refusal = error;
    } finally {
      await reopened.close();
    }
    expect(refusal).toBeInstanceOf(ToolsealError);
    expect((refusal as ToolsealError).code).toBe('INTERNAL');
    expect((refusal as ToolsealError).message).toMatch(/log key is missing/);
    expect(readdirSync(keysDir)).not.toContain('log.private.jwk.json');
  });
});
