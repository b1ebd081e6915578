// `--allow-http`: one https document, bounded in size and time, no redirects (README "Schemas split across files").
// Never used unless the vendor asked for it; plain `http:` is refused even then.

import { ToolsealError } from '../core/errors.ts';
import { readStreamWithin } from '../core/stream.ts';

export interface HttpsFetchLimits {
  maxBytes: number;
  /** The whole exchange, connection to last byte. */
  timeoutMs: number;
  /** The fetch to use (tests inject one); the global fetch by default. */
  fetch?: typeof fetch;
}

/** GET `url` (https only), refusing redirects, non-200 answers, bodies over `maxBytes` and anything slower than the bound. */
export async function fetchHttpsDocument(url: URL, limits: HttpsFetchLimits): Promise<Uint8Array> {
  if (url.protocol !== 'https:') throw new ToolsealError('EXTERNAL_REF', `${url.href} is not an https URL`);
  const signal = AbortSignal.timeout(limits.timeoutMs);
  const fetchImpl = limits.fetch ?? fetch;
  try {
    const response = await fetchImpl(url, {
      redirect: 'error',
      signal,
      headers: { Accept: 'application/schema+json, application/json' },
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new ToolsealError('FETCH_FAILED', `${url.href} answered HTTP ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > limits.maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge(url, limits.maxBytes);
    }
    return await readBounded(response, url, limits.maxBytes);
  } catch (error) {
    if (error instanceof ToolsealError) throw error;
    if (signal.aborted)
      throw new ToolsealError('FETCH_FAILED', `${url.href} did not answer within ${limits.timeoutMs} ms`, {
        cause: error,
      });
    throw new ToolsealError('FETCH_FAILED', `could not fetch ${url.href}`, { cause: error });
  }
}

function readBounded(response: Response, url: URL, maxBytes: number): Promise<Uint8Array> {
  return readStreamWithin(response.body, maxBytes, () => tooLarge(url, maxBytes));
}

function tooLarge(url: URL, maxBytes: number): ToolsealError {
  return new ToolsealError('TOO_LARGE', `${url.href} is over ${maxBytes} bytes; the limit is ${maxBytes}`);
}
