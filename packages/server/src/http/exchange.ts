// One place serialises every response and writes the access log line. Bodies are stringified
// once and written with an explicit Content-Length; nothing else in the app touches `res`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.ts';
import { CORS_HEADERS } from './cors.ts';
import { HttpRefusal, toErrorResponse } from './errors.ts';
import { parseQueryString, searchOf, type ParsedQuery } from './query-string.ts';
import { logAnswer } from './refusal-log.ts';
import { requestIdFor } from './request-id.ts';
import { isSerialized } from './serialized.ts';

/** Per-request state shared by the layers of one request. */
export interface Exchange {
  requestId: string;
  /** The contract's operationId once routed; metrics and logs name the request by it. */
  operation?: string;
  startedAt: number;
  path: string;
  query: ParsedQuery;
}

const EXCHANGE = Symbol('exchange');
type WithExchange = IncomingMessage & { [EXCHANGE]?: Exchange };

export function exchangeOf(req: IncomingMessage): Exchange {
  const carrier = req as WithExchange;
  let exchange = carrier[EXCHANGE];
  if (exchange === undefined) {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    exchange = {
      requestId: requestIdFor(req.headers['x-request-id']),
      startedAt: performance.now(),
      path: q === -1 ? url : url.slice(0, q),
      query: parseQueryString(searchOf(url)),
    };
    carrier[EXCHANGE] = exchange;
  }
  return exchange;
}

/** GET and HEAD take no body; a request that sends one is refused rather than half-read. */
export function refuseBody(req: IncomingMessage): void {
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')) {
    throw new HttpRefusal('invalid_request', `${req.method ?? 'GET'} requests take no body; send parameters in the query string.`);
  }
}

export function sendJson(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
  /** Extra headers; the object is filled in and written, so pass a fresh one. */
  headers: Record<string, string> = {},
): void {
  const exchange = exchangeOf(req);
  // A string body goes out in one write with the head; a Buffer would cost a second chunk (writev).
  const payload = isSerialized(body) ? body.serializedJson : JSON.stringify(body);
  headers['content-type'] = 'application/json; charset=utf-8';
  headers['content-length'] = String(Buffer.byteLength(payload));
  headers['x-request-id'] = exchange.requestId;
  // Only browsers need CORS headers, and they always send Origin on cross-origin requests.
  if (req.headers.origin !== undefined) {
    headers['access-control-allow-origin'] = CORS_HEADERS['access-control-allow-origin'];
    headers['access-control-expose-headers'] = CORS_HEADERS['access-control-expose-headers'];
  }
  res.writeHead(status, headers);
  res.end(payload);
  logAccess(logger, req, exchange, status);
}

/** Answers with the documented error body; unexpected errors are logged once, without reaching the client. */
export function sendError(logger: Logger, req: IncomingMessage, res: ServerResponse, error: unknown, headers?: Record<string, string>): void {
  const exchange = exchangeOf(req);
  const response = toErrorResponse(error, exchange.query.values);
  if (response.unexpected) {
    logger.error('unexpected error', { request_id: exchange.requestId, method: req.method, path: exchange.path, error });
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(logger, req, res, response.status, response.body, headers === undefined ? response.headers : { ...headers, ...response.headers });
}

/** Routes outside the contract that metrics name by path; anything else is `other`. */
const OPERATIONAL_PATHS = new Set(['/healthz', '/readyz', '/openapi.json', '/asyncapi.json', '/docs', '/docs/stream']);

function logAccess(logger: Logger, req: IncomingMessage, exchange: Exchange, status: number): void {
  logAnswer(logger, 'request', {
    operation: exchange.operation ?? (OPERATIONAL_PATHS.has(exchange.path) ? exchange.path : 'other'),
    method: req.method,
    path: exchange.path,
    status,
    ms: Math.round((performance.now() - exchange.startedAt) * 100) / 100,
    request_id: exchange.requestId,
  });
}
