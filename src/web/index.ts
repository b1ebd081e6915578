// mountWebRoutes: the registry's web pages (issue "A web page for the registry"), server-rendered with hono/jsx, one
// module per page, reaching the registry only through its use cases (never the store). Routes only, no middleware:
// nothing here runs on the /v1 API. A refusal is an HTML page with the status the API would answer (src/http/problem.ts).

import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { APPROVAL_ID_PATTERN } from '../log/entries.ts';
import { ToolsealError } from '../core/errors.ts';
import { type App, readQuery, type WitnessKeyView } from '../http/app-env.ts';
import { httpStatusByCode } from '../http/problem.ts';
import type { Registry } from '../registry/index.ts';
import { sendAsset } from './assets.ts';
import { renderDiffPage } from './diff-page.tsx';
import { readHomeQuery, renderHomePage } from './home-page.tsx';
import { renderApprovalShell, renderApprovalsShell, sendApprovalShell } from './approval-page.tsx';
import { renderErrorPage, sendPage } from './layout.tsx';
import { readLogCursor, renderLogPage } from './log-page.tsx';
import { renderManifestPage } from './manifest-page.tsx';
import { diffPagePath, PAGE_ROUTES, versionPagePath } from './paths.ts';
import { renderVersionPage } from './version-page.tsx';

type PageResult = Response | Parameters<typeof sendPage>[1] | Promise<Response | Parameters<typeof sendPage>[1]>;

/** Mount the pages on `app` (after the API's routes; none of these paths is an API path). */
/** `witnesses`: the registry's witness keys (`serve --witness-policy`); the version page's panel checks their cosignatures. */
export function mountWebRoutes(app: App, registry: Registry, witnesses: readonly WitnessKeyView[] = []): void {
  const page = (render: (c: Context) => PageResult) => (c: Context) => respondWithPage(c, render);
  const nameOf = (c: Context): string => `${c.req.param('namespace')}/${c.req.param('name')}`;

  app.get(
    PAGE_ROUTES.home,
    page((c) => renderHomePage(registry, readHomeQuery(readQuery(c, 'q'), readQuery(c, 'after')))),
  );
  app.get(
    PAGE_ROUTES.manifest,
    page((c) => renderManifestPage(registry, nameOf(c))),
  );
  app.get(
    PAGE_ROUTES.version,
    page(async (c) => {
      const name = nameOf(c);
      const version = c.req.param('version') ?? '';
      if (version !== 'latest') return renderVersionPage(registry, name, version, witnesses);
      c.header('Cache-Control', 'no-cache');
      return c.redirect(versionPagePath(name, await registry.resolveLatest(name)), 302);
    }),
  );
  app.get(
    PAGE_ROUTES.compare,
    page((c) => {
      const from = readQuery(c, 'from');
      const to = readQuery(c, 'to');
      if (!from || !to) throw new ToolsealError('BAD_REQUEST', 'choose two versions to compare (from and to)');
      return c.redirect(diffPagePath(nameOf(c), from, to), 303);
    }),
  );
  app.get(
    PAGE_ROUTES.diff,
    page((c) => renderDiffPage(registry, nameOf(c), c.req.param('from') ?? '', c.req.param('to') ?? '')),
  );
  app.get(
    PAGE_ROUTES.log,
    page((c) => renderLogPage(registry, readLogCursor(readQuery(c, 'before')))),
  );
  app.get(
    PAGE_ROUTES.approvals,
    page((c) => sendApprovalShell(c, renderApprovalsShell())),
  );
  app.get(
    PAGE_ROUTES.approval,
    page((c) => {
      const id = c.req.param('id') ?? '';
      if (!APPROVAL_ID_PATTERN.test(id)) throw new ToolsealError('NOT_FOUND', 'not an approval request id (apr_…)');
      return sendApprovalShell(c, renderApprovalShell(id));
    }),
  );
  app.get(PAGE_ROUTES.asset, (c) => respondWithPage(c, () => sendAsset(c, c.req.param('file') ?? '')));
}

/** The rendered page; a ToolsealError as an HTML error page (anything else goes on to the app's error handler). */
async function respondWithPage(c: Context, render: (c: Context) => PageResult): Promise<Response> {
  try {
    const result = await render(c);
    return result instanceof Response ? result : await sendPage(c, result);
  } catch (error) {
    if (!(error instanceof ToolsealError)) throw error;
    const status = httpStatusByCode[error.code] as ContentfulStatusCode;
    return sendPage(c, renderErrorPage(status, error.code, error.message), status);
  }
}
