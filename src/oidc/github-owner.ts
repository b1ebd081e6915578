// Looking up a GitHub owner's numeric id for `--github OWNER/REPO` without `--owner-id` (GitHub REST API
// "Get a user": GET /users/{username} answers `id` for users and organisations alike).

import { ToolsealError } from '../core/errors.ts';
import { isJsonObject } from '../core/json.ts';
import { defaultIssuerFetchLimits, type FetchFunction, fetchIssuerJson } from './issuer-url.ts';

export const GITHUB_API = 'https://api.github.com';

/** The numeric id (as the decimal string GitHub puts in `repository_owner_id`); FETCH_FAILED when not found. */
export async function lookupGithubOwnerId(
  owner: string,
  fetch: FetchFunction,
  options: { apiBase?: string; allowInsecureLoopback?: boolean } = {},
): Promise<string> {
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(owner)) {
    throw new ToolsealError('BAD_REQUEST', 'a GitHub owner is 1–39 letters, digits and -');
  }
  let answer: unknown;
  try {
    answer = await fetchIssuerJson(`${options.apiBase ?? GITHUB_API}/users/${owner}`, fetch, {
      ...defaultIssuerFetchLimits,
      allowInsecureLoopbackIssuer: options.allowInsecureLoopback === true,
    });
  } catch {
    throw new ToolsealError('FETCH_FAILED', `could not look up GitHub owner ${owner}; give --owner-id`);
  }
  const id = isJsonObject(answer) ? answer.id : undefined;
  const login = isJsonObject(answer) ? answer.login : undefined;
  if (
    typeof id !== 'number' ||
    !Number.isSafeInteger(id) ||
    id <= 0 ||
    typeof login !== 'string' ||
    login.toLowerCase() !== owner.toLowerCase()
  ) {
    throw new ToolsealError('FETCH_FAILED', `GitHub answered no id for owner ${owner}; give --owner-id`);
  }
  return String(id);
}
