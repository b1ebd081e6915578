// The frame every page shares and how a page is sent: server-rendered HTML (hono/jsx escapes every text child and
// attribute, so hostile manifest text renders as text), with Content-Security-Policy `default-src 'self'` (CSP 3
// §6.1.3: no inline script or style, nothing from another origin), nosniff and no referrer.

import type { Context } from 'hono';
import type { Child, FC, PropsWithChildren } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { assetPath } from './paths.ts';

/** Headers of every page: the policy forbids inline script and style and anything that is not from this origin. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

/** Render `page` as a whole document with the page headers. */
export async function sendPage(c: Context, page: Child, status: ContentfulStatusCode = 200): Promise<Response> {
  const rendered = (await page) as { toString(): string | Promise<string> } | null | undefined;
  const html = `<!DOCTYPE html>${rendered === null || rendered === undefined ? '' : await rendered.toString()}`;
  return c.body(html, status, PAGE_HEADERS);
}

interface LayoutProps {
  title: string;
  /** Module scripts of this page, served from /ui/assets/. */
  scripts?: readonly string[];
}

export const Layout: FC<PropsWithChildren<LayoutProps>> = ({ title, scripts = [], children }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${title} · toolseal`}</title>
      <link rel="stylesheet" href={assetPath('style.css')} />
      {scripts.map((file) => (
        <script type="module" src={assetPath(file)} />
      ))}
    </head>
    <body>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="site">
        <nav aria-label="Site">
          <a class="brand" href="/">
            toolseal
          </a>
          <a href="/">Manifests</a>
          <a href="/ui/log">Transparency log</a>
          <a href="/ui/approvals">Approvals</a>
        </nav>
      </header>
      <main id="main">{children}</main>
      <footer>
        Every page reads the same registry as the <a href="/v1/manifests">HTTP API</a>; the signing keys are at{' '}
        <a href="/.well-known/jwks.json">/.well-known/jwks.json</a>.
      </footer>
    </body>
  </html>
);

/** An RFC 3339 time as `2026-01-02 03:04:05 UTC`, in a `<time>` element; a dash when there is none. */
export const Time: FC<{ value: string | null | undefined }> = ({ value }) => {
  if (value === null || value === undefined) return <span class="muted">–</span>;
  const shown = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(value)
    ? `${value.slice(0, 10)} ${value.slice(11, 19)} UTC`
    : value;
  return <time datetime={value}>{shown}</time>;
};

export const StatusBadge: FC<{ status: string }> = ({ status }) => (
  <span class={`badge ${status === 'yanked' ? 'yanked' : 'active'}`}>{status}</span>
);

/** The page shown for a refusal (the registry's error message, which never holds server paths or secrets). */
export function renderErrorPage(status: number, code: string, message: string) {
  return <ErrorPage status={status} code={code} message={message} />;
}

const ErrorPage: FC<{ status: number; code: string; message: string }> = ({ status, code, message }) => (
  <Layout title={code}>
    <h1>{status === 404 ? 'Not found' : 'Something is wrong'}</h1>
    <p class="notice error">
      <strong>{code}</strong>: {message}
    </p>
    <p>
      <a href="/">Back to the manifests</a>
    </p>
  </Layout>
);
