// GET /healthz and GET /.well-known/jwks.json (the registry's attestation keys as an RFC 7517 §5 JWK Set).

import { ROUTES } from '../../protocol/routes.ts';
import type { HealthResponse } from '../../protocol/wire.ts';
import type { Registry } from '../../registry/index.ts';
import type { App } from '../app-env.ts';

export function mountHealthKeyRoutes(app: App, registry: Registry): void {
  app.get(ROUTES.health, (c) => {
    const checkpoint = registry.latestCheckpoint();
    const role = registry.sequencingRole;
    return c.json({
      status: 'ok',
      logSize: checkpoint?.size ?? 0,
      activeKid: registry.activeKid,
      ...(role === undefined ? {} : { sequencer: role }),
    } satisfies HealthResponse);
  });

  app.get(ROUTES.jwks, (c) => {
    c.header('Cache-Control', 'public, max-age=60');
    return c.json(registry.jwks());
  });
}
