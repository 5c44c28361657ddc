// Cross-origin access for browser clients: every response to a request with an Origin may be read
// from any origin (the API is authenticated by key, never by cookies, so `*` grants nothing a key
// does not), and a CORS preflight is answered at once without authentication, as browsers send it
// without credentials. The headers are written by the one writer (exchange.ts).
import type { IncomingMessage } from 'node:http';

export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'X-Request-Id, Retry-After, WWW-Authenticate, Allow, RateLimit, RateLimit-Policy',
} as const;

export const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'access-control-allow-methods': 'GET, HEAD',
  'access-control-allow-headers': 'Authorization, Topics, Filter, Last-Event-ID, X-Request-Id',
  'access-control-max-age': '86400',
} as const;

/** A CORS preflight: OPTIONS with Access-Control-Request-Method, on any path. */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
}
