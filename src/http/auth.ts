// The publisher token from `Authorization: Bearer <token>` (RFC 6750 §2.1). The scheme is case-insensitive
// (RFC 9110 §11.1); the token is a b64token. Only HTTP knows the header: the registry is handed the token.

const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The bearer token, or undefined when the header is absent or not a bearer credential. */
export function readBearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  return BEARER.exec(authorization)?.[1];
}
