// createApp(deps): the registry's HTTP API, composed from one module per route group (src/http/routes/), with
// RFC 9457 problem+json for every refusal, 401 with WWW-Authenticate (RFC 9110 §11.6.1) and 405 with Allow (§15.5.6).
// A request whose client went away mid-body is neither an error to report nor one to answer.

import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono } from 'hono';
import { ToolsealError } from '../core/errors.ts';
import { allowedMethodsOf } from '../protocol/routes.ts';
import type { Registry, TrustedPublishing } from '../registry/index.ts';
import type { App, AppContext, AppEnv, CheckpointDecorator, ServedWitnesses, WitnessKeyView } from './app-env.ts';
import { RequestAbortedError } from './body.ts';
import { DEFAULT_CACHE_BYTES, ImmutableBodyCache } from './immutable-body-cache.ts';
import { respondWithProblem } from './problem.ts';
import { mountApprovalRoutes } from './routes/approvals.ts';
import { mountBlobRoutes } from './routes/blobs.ts';
import { mountHealthKeyRoutes } from './routes/health-keys.ts';
import { mountLogRoutes } from './routes/log.ts';
import { mountManifestRoutes } from './routes/manifests.ts';
import { mountOfficialRegistryRoutes } from './routes/official-registry.ts';
import { mountOpenApiRoute } from './routes/openapi.ts';
import { mountPublishRoutes } from './routes/publish.ts';
import { mountSigstoreRoutes } from './routes/sigstore.ts';
import { mountYankRoutes } from './routes/yank.ts';
import type { RegistryMetrics } from '../telemetry/index.ts';
import { createAccessLog } from './middleware/access-log.ts';
import { createRequestTelemetry } from './middleware/request-telemetry.ts';

export interface AppDeps {
  registry: Registry;
  /** Largest accepted publish body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Bytes of immutable responses kept in memory (default 64 MiB; 0 disables), each checked before every send. */
  cacheBytes?: number;
  /** The immutable response cache to use (the composition root shares it with the server's fast reads). */
  cache?: ImmutableBodyCache;
  /** Called with unexpected errors (the client only ever sees a generic INTERNAL problem). */
  onUnexpectedError?: (error: unknown) => void;
  /** The witnesses (`serve --witness-policy`): cosignatures merged into served checkpoints, status in /healthz. */
  witnesses?: ServedWitnesses;
  /** Trusted publishing (issue 28): publish also accepts a CI's OIDC ID token, and attests how it was authorised. */
  trustedPublishing?: TrustedPublishing;
  /** Telemetry (issue 29): request spans and metrics, the JSON access log. Absent: no middleware at all. */
  telemetry?: AppTelemetry;
  /**
   * Mounts the web pages (src/web's mountWebRoutes, given by the composition root: the pages use src/http, so
   * src/http never imports them). Absent: an API without pages.
   */
  mountPages?: (app: App, registry: Registry, witnessKeys: readonly WitnessKeyView[]) => void;
}

export interface AppTelemetry {
  /** Request, publish and write metrics (`serve --metrics-listen`). */
  metrics?: RegistryMetrics;
  /** Request spans (tracing was started: `OTEL_*`). */
  tracing?: boolean;
  /** Access log lines (`serve --log-format json`). */
  accessLog?: (line: string) => void;
}

/** Build the registry's HTTP API. No side effects: nothing listens until the caller serves it. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { registry } = deps;
  const cache = deps.cache ?? new ImmutableBodyCache(deps.cacheBytes ?? DEFAULT_CACHE_BYTES);
  const app: App = new Hono<AppEnv>({ strict: true });
  const onUnexpectedError = deps.onUnexpectedError ?? ((e) => console.error('toolseal: unexpected error', e));
  app.onError((error, c) => respondToError(c, error, onUnexpectedError));
  app.notFound(respondToUnknownRoute);
  const telemetry = deps.telemetry;
  if (telemetry?.accessLog !== undefined) app.use(createAccessLog({ write: telemetry.accessLog }));
  if (telemetry?.metrics !== undefined || telemetry?.tracing === true)
    app.use(createRequestTelemetry(telemetry.metrics));
  // Registration order is the order the routes were always matched in.
  const witnesses = deps.witnesses;
  const cosign: CheckpointDecorator = witnesses ? (note) => witnesses.withCosignatures(note) : (note) => note;
  mountHealthKeyRoutes(app, registry, witnesses);
  mountPublishRoutes(app, registry, deps.maxBodyBytes ?? 1024 * 1024, cosign, deps.trustedPublishing);
  mountManifestRoutes(app, registry, cache);
  mountSigstoreRoutes(app, registry, cosign);
  mountYankRoutes(app, registry);
  mountApprovalRoutes(app, registry);
  mountBlobRoutes(app, registry, cache, cosign);
  mountLogRoutes(app, registry, cosign);
  mountOfficialRegistryRoutes(app, registry);
  mountOpenApiRoute(app, registry.origin);
  deps.mountPages?.(app, registry, witnesses?.cosigners ?? []);
  return app;
}

/**
 * A ToolsealError as its problem; a client that disconnected mid-body gets nothing (the adapter writes nothing for
 * RESPONSE_ALREADY_SENT); anything else is reported and answered as a generic INTERNAL problem.
 */
function respondToError(c: AppContext, error: Error, onUnexpectedError: (error: unknown) => void): Response {
  if (error instanceof RequestAbortedError) return RESPONSE_ALREADY_SENT;
  if (error instanceof ToolsealError) {
    const response = respondWithProblem(c, error.code, error.message, error.pointer);
    // RFC 9110 §11.6.1: a 401 names the authentication scheme it wants.
    if (error.code === 'UNAUTHENTICATED') response.headers.set('WWW-Authenticate', 'Bearer realm="toolseal"');
    return response;
  }
  onUnexpectedError(error);
  return respondWithProblem(c, 'INTERNAL', 'internal error');
}

/** A known path with another method is 405 with Allow (RFC 9110 §15.5.6), not 404. */
function respondToUnknownRoute(c: AppContext): Response {
  const path = new URL(c.req.url).pathname;
  const allowed = allowedMethodsOf(path);
  if (allowed.length > 0 && !allowed.includes(c.req.method)) {
    const response = respondWithProblem(
      c,
      'METHOD_NOT_ALLOWED',
      `${c.req.method} is not allowed on ${path}; use ${allowed.join(' or ')}`,
    );
    response.headers.set('Allow', allowed.join(', '));
    return response;
  }
  return respondWithProblem(c, 'NOT_FOUND', `no route for ${c.req.method} ${path}`);
}
