// The approvals pages as the server sends them (issue 13 §3): static shells with no approval data whatever the
// request carries, a policy that allows only this origin's script, style and fetch, never stored, the token input
// without a name, 404 for an id that is not one, the scripts served, and "Approvals" in every page's nav.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalsClient } from '../../src/client/approvals.ts';
import { cleanupTempDirs } from '../helpers/registry-helpers.ts';
import { type ApprovalsFixture, refundArguments, startApprovalsRegistry } from '../client/approvals-fixture.ts';

const POLICY =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'none'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

let fixture: ApprovalsFixture;
let pending: { id: string; digest: string };

beforeAll(async () => {
  fixture = await startApprovalsRegistry();
  const host = new ApprovalsClient({ registry: fixture.url, token: fixture.hostToken });
  pending = await host.request(fixture.envelope(refundArguments(4200, ',"note":"late parcel"')));
});
afterAll(async () => {
  await fixture.close();
  cleanupTempDirs();
});

/** GET `path` as an operator's browser might (a bearer token and a cookie the page must ignore). */
async function get(path: string): Promise<{ status: number; headers: Headers; body: string }> {
  const response = await fetch(`${fixture.url}${path}`, {
    headers: { Authorization: `Bearer ${fixture.operatorToken}`, Cookie: `token=${fixture.operatorToken}` },
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

function expectNoApprovalData(body: string): void {
  expect(body).not.toContain(pending.digest);
  expect(body).not.toContain('cus_123');
  expect(body).not.toContain('late parcel');
  expect(body).not.toContain('Refund a charge');
  expect(body).not.toContain('checkout-host');
  expect(body).not.toContain(fixture.operatorToken);
}

describe('the approvals pages', () => {
  it('sends the list as a shell with no data, a narrow policy and no storing', async () => {
    const page = await get('/ui/approvals');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(POLICY);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('set-cookie')).toBeNull();
    expectNoApprovalData(page.body);
    expect(page.body).not.toContain(pending.id);
    expect(page.body).toContain('<script type="module" src="/ui/assets/approvals.js"></script>');
    expect(page.body).toContain('data-approvals-list=""');
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)/);
  });

  it('sends one request as a shell that names only the id of its URL', async () => {
    const page = await get(`/ui/approvals/${pending.id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(POLICY);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expectNoApprovalData(page.body);
    expect(page.body).toContain(`data-approval-id="${pending.id}"`);
    const input = /<input id="operator-token"[^>]*>/.exec(page.body)?.[0] ?? '';
    expect(input).toContain('type="password"');
    expect(input).not.toMatch(/\bname=/);
    expect(input).toContain('autocomplete="off"');
  });

  it('answers 404 with an HTML page for an id that is not an approval id', async () => {
    for (const id of ['apr_short', `${pending.id}x`, `abc_${pending.id.slice(4)}`, '%3Cscript%3E']) {
      const page = await get(`/ui/approvals/${id}`);
      expect(page.status, id).toBe(404);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.body).toContain('<strong>NOT_FOUND</strong>');
      expect(page.body).not.toContain('<script>');
    }
  });

  it('serves the scripts, and every page links to the approvals', async () => {
    for (const file of ['approvals.js', 'approval-words.js']) {
      const asset = await get(`/ui/assets/${file}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(asset.body).not.toMatch(
        /innerHTML|outerHTML|insertAdjacentHTML|localStorage|sessionStorage|document\.cookie|indexedDB/,
      );
    }
    const home = await get('/');
    expect(home.body).toContain('<a href="/ui/approvals">Approvals</a>');
  });
});
