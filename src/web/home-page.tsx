// GET / — the search box and the manifests (latest version, status, publisher, time), a page at a time, through the
// registry's one listing use case (what GET /v1/manifests?q= answers), so the page searches whatever the API searches.

import type { FC } from 'hono/jsx';
import { ToolsealError } from '../core/errors.ts';
import type { ManifestListing, Registry } from '../registry/index.ts';
import { Layout, StatusBadge, Time } from './layout.tsx';
import { manifestPagePath, versionPagePath } from './paths.ts';

/** Manifests per page. */
export const HOME_PAGE_SIZE = 25;
const MAX_QUERY_LENGTH = 200;

export interface HomeQuery {
  q: string | undefined;
  after: string | undefined;
}

/** The query of `/?q=&after=`, bounded; BAD_REQUEST when a value is longer than any name. */
export function readHomeQuery(q: string | undefined, after: string | undefined): HomeQuery {
  const query = q?.trim() || undefined;
  if ((query?.length ?? 0) > MAX_QUERY_LENGTH || (after?.length ?? 0) > MAX_QUERY_LENGTH)
    throw new ToolsealError('BAD_REQUEST', `a search is at most ${MAX_QUERY_LENGTH} characters`);
  return { q: query, after: after || undefined };
}

function pageHref(q: string | undefined, after: string | undefined): string {
  const params = new URLSearchParams();
  if (q !== undefined) params.set('q', q);
  if (after !== undefined) params.set('after', after);
  const search = params.toString();
  return search === '' ? '/' : `/?${search}`;
}

/** The page for `query`: one call to registry.listManifests. */
export async function renderHomePage(registry: Registry, query: HomeQuery) {
  const { items, nextAfter } = await registry.listManifests(query.q, query.after, HOME_PAGE_SIZE);
  return <HomePage query={query} items={items} nextAfter={nextAfter} />;
}

const HomePage: FC<{ query: HomeQuery; items: ManifestListing[]; nextAfter: string | undefined }> = ({
  query,
  items,
  nextAfter,
}) => (
  <Layout title={query.q === undefined ? 'Manifests' : `Search: ${query.q}`}>
    <h1>Manifests</h1>
    <search>
      <form class="search" method="get" action="/">
        <label for="q" class="muted">
          Search manifests
        </label>
        <input id="q" type="search" name="q" value={query.q ?? ''} placeholder="a name, e.g. payments" />
        <button type="submit">Search</button>
      </form>
    </search>
    {query.q !== undefined && (
      <p class="muted" data-testid="search-summary">
        {items.length === 0 ? 'No manifest matches' : 'Manifests matching'} “{query.q}”
        {query.after !== undefined && ' (continued)'}. <a href="/">Show all</a>
      </p>
    )}
    {items.length === 0 ? (
      <p>{query.q === undefined ? 'This registry has no manifests yet.' : 'Try another word.'}</p>
    ) : (
      <ManifestTable items={items} />
    )}
    <nav class="pages" aria-label="Pages">
      {query.after !== undefined && <a href={pageHref(query.q, undefined)}>First page</a>}
      {nextAfter !== undefined && (
        <a href={pageHref(query.q, nextAfter)} rel="next">
          Next page
        </a>
      )}
    </nav>
  </Layout>
);

const ManifestTable: FC<{ items: ManifestListing[] }> = ({ items }) => (
  <div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th scope="col">Manifest</th>
          <th scope="col">Latest</th>
          <th scope="col">Status</th>
          <th scope="col">Publisher</th>
          <th scope="col">Stored</th>
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <tr data-manifest={item.name}>
            <td>
              <a href={manifestPagePath(item.name)}>{item.name}</a>
            </td>
            <td>
              <a href={versionPagePath(item.name, item.latestVersion)}>{item.latestVersion}</a>
            </td>
            <td>
              <StatusBadge status={item.status} />
            </td>
            <td>{item.publisher}</td>
            <td>
              <Time value={item.storedAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);
