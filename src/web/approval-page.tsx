// GET /ui/approvals and GET /ui/approvals/{id} (issue 13 §3): the operators' pages for approval requests. The
// registry shows a request only to a token holder, so these pages are static shells that carry no approval data:
// their script (assets/approvals.js) asks for the operator's token, keeps it in memory and fetches the same-origin
// API. Their policy (CSP 3) allows only this origin's script, style and fetch, no form target, and nothing is cached
// (RFC 9111 §5.2.2.5 no-store).

import type { Context } from 'hono';
import type { Child, FC } from 'hono/jsx';
import { Layout, PAGE_HEADERS } from './layout.tsx';

/** The approvals pages' headers: the site's, with a narrower policy and no storing. */
export const APPROVAL_PAGE_HEADERS: Readonly<Record<string, string>> = {
  ...PAGE_HEADERS,
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'none'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Cache-Control': 'no-store',
};

/** Send an approvals shell with its headers (synchronous: the shells have no async parts). */
export function sendApprovalShell(c: Context, page: Child): Response {
  return c.body(`<!DOCTYPE html>${String(page)}`, 200, APPROVAL_PAGE_HEADERS);
}

export function renderApprovalsShell() {
  return (
    <Layout title="Approvals" scripts={['approvals.js']}>
      <h1>Approval requests</h1>
      <Intro />
      <TokenForm>
        <label for="approval-status">Status</label>
        <select id="approval-status" data-status-filter="" />
      </TokenForm>
      <section data-approvals-list="" data-state="locked" aria-live="polite">
        <p class="muted">Enter an operator token to see the requests.</p>
      </section>
    </Layout>
  );
}

/** The shell of one request; `id` is the one in the URL, already checked to be an approval id. */
export function renderApprovalShell(id: string) {
  return (
    <Layout title={`Approval ${id}`} scripts={['approvals.js']}>
      <h1>
        Approval request <span class="mono">{id}</span>
      </h1>
      <Intro />
      <TokenForm />
      <section data-approval-id={id} data-state="locked" aria-live="polite">
        <p class="muted">Enter an operator token to see this request.</p>
      </section>
      <p>
        <a href="/ui/approvals">All approval requests</a>
      </p>
    </Layout>
  );
}

const Intro: FC = () => (
  <p class="muted">
    A host asks to run one exact call of a signed tool. An operator approves its digest, and only a call that recomputes
    to it runs, once. The token stays in this tab's memory: it is sent only as an Authorization header to this
    registry's API, never stored.
  </p>
);

/** The token input has no name: even if the script did not run, the form could not send it anywhere. */
const TokenForm: FC<{ children?: Child }> = ({ children }) => (
  <form class="search" data-token-form="" autocomplete="off">
    <label for="operator-token">Operator token</label>
    <input id="operator-token" type="password" autocomplete="off" spellcheck={false} required />
    {children}
    <button type="submit">Show</button>
  </form>
);
