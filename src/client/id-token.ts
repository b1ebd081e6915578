// Where `toolseal publish --oidc` gets its OIDC ID token (issue 28 §2): a file or stdin (`--id-token FILE|-`), the
// TOOLSEAL_ID_TOKEN variable, or GitHub Actions' token endpoint (ACTIONS_ID_TOKEN_REQUEST_URL with `&audience=`,
// authorised by ACTIONS_ID_TOKEN_REQUEST_TOKEN; GitHub docs "Configuring OpenID Connect in cloud providers").

import { ToolsealError } from '../core/errors.ts';
import { isJsonObject } from '../core/json.ts';
import { readStreamWithin } from '../core/stream.ts';
import { parseStrict } from '../pipeline/parse.ts';

const MAX_TOKEN_BYTES = 16 * 1024;
const COMPACT_JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export interface IdTokenSources {
  /** `--id-token FILE|-`: read the token from a file or (`-`) from stdin. */
  idTokenPath?: string;
  /** The audience to ask the CI for (the registry's; GitHub puts it in `aud`). */
  audience: string;
  env: Readonly<Record<string, string | undefined>>;
  readFile: (path: string) => Promise<Uint8Array>;
  readStdin: () => Promise<Uint8Array>;
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  /** Time for the Actions endpoint to answer (default 10 s). */
  timeoutMs?: number;
}

export type IdTokenSource = 'file' | 'stdin' | 'env' | 'github-actions';

/**
 * The ID token, from the first source given: `--id-token`, then TOOLSEAL_ID_TOKEN, then GitHub Actions.
 * UNAUTHENTICATED when none is available or the one found is not a compact JWT; messages never hold a token.
 */
export async function acquireIdToken(sources: IdTokenSources): Promise<{ token: string; source: IdTokenSource }> {
  if (sources.idTokenPath !== undefined) {
    const fromStdin = sources.idTokenPath === '-';
    const bytes = fromStdin ? await sources.readStdin() : await sources.readFile(sources.idTokenPath);
    return {
      token: checkToken(bytes, fromStdin ? 'stdin' : 'the --id-token file'),
      source: fromStdin ? 'stdin' : 'file',
    };
  }
  const fromEnv = sources.env.TOOLSEAL_ID_TOKEN;
  if (fromEnv !== undefined && fromEnv !== '') {
    return { token: checkToken(new TextEncoder().encode(fromEnv), 'TOOLSEAL_ID_TOKEN'), source: 'env' };
  }
  const requestUrl = sources.env.ACTIONS_ID_TOKEN_REQUEST_URL;
  const requestToken = sources.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN;
  if (requestUrl && requestToken) {
    return { token: await requestGithubActionsToken(requestUrl, requestToken, sources), source: 'github-actions' };
  }
  throw new ToolsealError(
    'UNAUTHENTICATED',
    '--oidc found no ID token: give --id-token FILE|-, set TOOLSEAL_ID_TOKEN, or run in GitHub Actions with `permissions: id-token: write`',
  );
}

async function requestGithubActionsToken(requestUrl: string, requestToken: string, sources: IdTokenSources) {
  let url: URL;
  try {
    url = new URL(requestUrl);
  } catch {
    throw new ToolsealError('UNAUTHENTICATED', 'ACTIONS_ID_TOKEN_REQUEST_URL is not a URL');
  }
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new ToolsealError('UNAUTHENTICATED', 'ACTIONS_ID_TOKEN_REQUEST_URL must be an https: URL');
  }
  url.searchParams.set('audience', sources.audience);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), sources.timeoutMs ?? 10_000);
  try {
    const response = await sources.fetch(url.href, {
      method: 'GET',
      redirect: 'error',
      signal: controller.signal,
      headers: { Authorization: `bearer ${requestToken}`, Accept: 'application/json' },
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new ToolsealError('UNAUTHENTICATED', `the GitHub Actions token endpoint answered ${response.status}`);
    }
    const bytes = await readStreamWithin(
      response.body,
      MAX_TOKEN_BYTES,
      () => new ToolsealError('UNAUTHENTICATED', 'the GitHub Actions token endpoint answered too much'),
    );
    let value: unknown;
    try {
      const parsed = parseStrict(bytes, { maxBytes: MAX_TOKEN_BYTES, maxDepth: 4 }).value;
      value = isJsonObject(parsed) ? parsed.value : undefined;
    } catch {
      value = undefined;
    }
    if (typeof value !== 'string') {
      throw new ToolsealError('UNAUTHENTICATED', 'the GitHub Actions token endpoint answered no token');
    }
    return checkToken(new TextEncoder().encode(value), 'the GitHub Actions token endpoint');
  } catch (error) {
    if (error instanceof ToolsealError) throw error;
    throw new ToolsealError('UNAUTHENTICATED', 'the GitHub Actions token endpoint is unreachable');
  } finally {
    clearTimeout(timer);
  }
}

/** The token text (one trailing newline allowed), when it is a compact JWS within the size limit. */
function checkToken(bytes: Uint8Array, where: string): string {
  if (bytes.byteLength > MAX_TOKEN_BYTES)
    throw new ToolsealError('UNAUTHENTICATED', `the ID token from ${where} is too large`);
  const text = new TextDecoder().decode(bytes).replace(/\r?\n$/, '');
  if (!COMPACT_JWT.test(text)) throw new ToolsealError('UNAUTHENTICATED', `${where} holds no compact JWT`);
  return text;
}
