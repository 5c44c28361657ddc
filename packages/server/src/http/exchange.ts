// The one writer: every response of both listeners leaves through here, with X-Request-Id, CORS
// headers for browsers and one access log line. JSON bodies are stringified once and written with
// an explicit Content-Length; static resources (the docs) are answered with their ETag, or 304;
// streamed bodies are copied to the socket by the one writer loop (event-stream-writer.ts).
// Nothing else in the app touches `res`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.ts';
import { CORS_HEADERS, PREFLIGHT_HEADERS } from './cors.ts';
import { HttpRefusal, toErrorResponse } from './errors.ts';
import { closeBody, type StreamBody } from '../stream/readiness.ts';
import { writeFrames, type WriteFramesOptions } from './event-stream-writer.ts';
import { parseQueryString, searchOf, type ParsedQuery } from './query-string.ts';
import { logAnswer } from './refusal-log.ts';
import { requestIdFor } from './request-id.ts';
import { isSerialized } from './serialized.ts';

/** Per-request state shared by the layers of one request. */
export interface Exchange {
  requestId: string;
  /**
   * The contract's operationId once routed, or the name of a route outside the contract (static
   * routes, `preflight`); metrics and logs name the request by it, `other` when absent.
   */
  operation?: string;
  /** The listener that took the request; its access lines are `request` or `stream request`. */
  listener?: 'api' | 'stream';
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
  writeJson(logger, req, res, status, body, headers, undefined);
}

function writeJson(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
  /** The refusal's error code, for the access line. */
  error: string | undefined,
): void {
  const exchange = exchangeOf(req);
  // A string is encoded straight into the socket's write; bytes (documents as the engine handed
  // them over) are written as they are. A body in pieces is measured and written piece by piece
  // (one writev), never joined into one that would be copied whole.
  const pieces = isSerialized(body) ? body.serializedJson : [JSON.stringify(body)];
  let length = 0;
  for (const piece of pieces) length += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.byteLength;
  headers['content-type'] = 'application/json; charset=utf-8';
  headers['content-length'] = String(length);
  writeHead(req, res, exchange, status, headers);
  if (pieces.length === 1) {
    res.end(pieces[0]);
  } else {
    res.cork();
    for (let i = 0; i < pieces.length - 1; i += 1) res.write(pieces[i]);
    res.end(pieces[pieces.length - 1]);
    res.uncork();
  }
  logAccess(logger, req, exchange, status, error);
}

/** A body built once and served as is, with a strong ETag (a hash of its bytes). */
export interface StaticResource {
  contentType: string;
  body: Buffer;
  etag: string;
  cacheControl: string;
  headers?: Readonly<Record<string, string>>;
}

/**
 * Answers with the resource, or 304 with no body when If-None-Match holds its ETag. Readable from
 * any origin, with or without an Origin header: the documents are public.
 */
export function sendResource(logger: Logger, req: IncomingMessage, res: ServerResponse, found: StaticResource): void {
  const exchange = exchangeOf(req);
  const fresh = (req.headers['if-none-match'] ?? '').split(',').some((tag) => tag.trim() === found.etag || tag.trim() === '*');
  const headers: Record<string, string> = {
    'content-type': found.contentType,
    etag: found.etag,
    'cache-control': found.cacheControl,
    'access-control-allow-origin': CORS_HEADERS['access-control-allow-origin'],
    ...found.headers,
  };
  const status = fresh ? 304 : 200;
  if (!fresh) headers['content-length'] = String(found.body.length);
  writeHead(req, res, exchange, status, headers);
  if (fresh) res.end();
  else res.end(found.body);
  logAccess(logger, req, exchange, status);
}

/** Answers a CORS preflight (cors.ts) with 204 and what a browser client may send. */
export function sendPreflight(logger: Logger, req: IncomingMessage, res: ServerResponse): void {
  const exchange = exchangeOf(req);
  exchange.operation = 'preflight';
  writeHead(req, res, exchange, 204, { ...PREFLIGHT_HEADERS, 'content-length': '0' });
  res.end();
  logAccess(logger, req, exchange, 204);
}

/** How a streamed body is written: the heartbeat and the byte limit of one subscriber. */
export type StreamWriting = Omit<WriteFramesOptions, 'log' | 'requestId'>;

/**
 * Sends the head, then copies `body` to the socket until it ends, the client leaves or the
 * subscriber falls too far behind (event-stream-writer.ts). Never rejects. The access line is
 * written with the head: a stream's answer is its status. Not an async function: nothing here
 * waits for the stream, so nothing of this call outlives it but the writer.
 */
export function sendStream(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: StreamBody,
  writing: StreamWriting,
): Promise<void> {
  const exchange = exchangeOf(req);
  if (res.destroyed) return closeBody(body);
  writeHead(req, res, exchange, status, headers);
  logAccess(logger, req, exchange, status);
  if (req.method === 'HEAD') {
    res.end();
    return closeBody(body);
  }
  return writeFrames(res, body, { ...writing, log: logger, requestId: exchange.requestId });
}

function writeHead(req: IncomingMessage, res: ServerResponse, exchange: Exchange, status: number, headers: Record<string, string>): void {
  headers['x-request-id'] = exchange.requestId;
  // Only browsers need CORS headers, and they always send Origin on cross-origin requests.
  if (req.headers.origin !== undefined) {
    headers['access-control-allow-origin'] = CORS_HEADERS['access-control-allow-origin'];
    headers['access-control-expose-headers'] = CORS_HEADERS['access-control-expose-headers'];
  }
  res.writeHead(status, headers);
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
  // A refusal describes this request only: no cache may keep it.
  const answerHeaders = headers === undefined ? response.headers : { ...headers, ...response.headers };
  answerHeaders['cache-control'] = 'no-store';
  writeJson(logger, req, res, response.status, response.body, answerHeaders, response.body.error);
}

function logAccess(logger: Logger, req: IncomingMessage, exchange: Exchange, status: number, error?: string): void {
  logAnswer(logger, exchange.listener === 'stream' ? 'stream request' : 'request', {
    operation: exchange.operation ?? 'other',
    method: req.method,
    path: exchange.path,
    status,
    ...(error === undefined ? {} : { error }),
    ms: Math.round((performance.now() - exchange.startedAt) * 100) / 100,
    request_id: exchange.requestId,
  });
}
