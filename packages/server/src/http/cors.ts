// Cross-origin access for browser clients: every response to a request with an Origin may be read
// from any origin (the API is authenticated by key, never by cookies, so `*` grants nothing a key
// does not), and a CORS preflight is answered at once without authentication, as browsers send it
// without credentials.
import type { IncomingMessage, ServerResponse } from 'node:http';

export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'X-Request-Id, Retry-After, WWW-Authenticate, Allow, RateLimit, RateLimit-Policy',
} as const;

const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'access-control-allow-methods': 'GET, HEAD',
  'access-control-allow-headers': 'Authorization, Topics, Filter, Last-Event-ID, X-Request-Id',
  'access-control-max-age': '86400',
  'content-length': '0',
} as const;

/** Answers a CORS preflight (OPTIONS with Access-Control-Request-Method) and returns true; false for anything else. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'OPTIONS' || req.headers['access-control-request-method'] === undefined) return false;
  res.writeHead(204, PREFLIGHT_HEADERS);
  res.end();
  return true;
}
