// GET /healthz and GET /.well-known/jwks.json (the registry's attestation keys as an RFC 7517 §5 JWK Set).

import type { HealthResponse, WitnessHealthDto } from '../../protocol/wire.ts';
import type { Registry } from '../../registry/index.ts';
import type { App, ServedWitnesses } from '../app-env.ts';
import { mountOperation } from '../operations.ts';

export function mountHealthKeyRoutes(app: App, registry: Registry, witnesses?: ServedWitnesses): void {
  mountOperation(app, 'health', async (c) => {
    const checkpoint = await registry.latestCheckpoint();
    const role = registry.sequencingRole;
    const health = {
      status: 'ok',
      logSize: checkpoint?.size ?? 0,
      activeKid: await registry.activeKid(),
      ...(role === undefined ? {} : { sequencer: role }),
    } satisfies HealthResponse;
    if (!witnesses) return c.json(health);
    // Each witness: the size it last cosigned, how far behind the log it is, and its last failure (never blocking).
    const states = witnesses.status().map(
      (w): WitnessHealthDto => ({
        name: w.witness,
        cosignedSize: w.cosignedSize ?? null,
        behindBy: w.behindBy ?? null,
        consecutiveFailures: w.consecutiveFailures,
        lastError: w.lastError ?? null,
      }),
    );
    return c.json({ ...health, witnesses: states } satisfies HealthResponse);
  });

  mountOperation(app, 'jwks', async (c) => {
    c.header('Cache-Control', 'public, max-age=60');
    return c.json(await registry.jwks());
  });
}
