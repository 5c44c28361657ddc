// Each listener (API and stream) is one Express application, built here in one order:
//
//   the request's exchange (exchange.ts) → the operator's middleware (runs for every request)
//   → CORS preflight, on any path (cors.ts) → the listener's routes (the contract's operations,
//   then the routes outside the contract) → 404 → the error middleware
//
// Nothing here or in a router writes to `res` but exchange.ts. Whatever a route, a router or a
// middleware passes to `next(error)` or throws becomes the contract's ErrorBody through
// `sendError`: a documented refusal keeps its status, a 4xx that a middleware marks `expose`
// keeps its message, anything else is a 500 logged once with the request id.
//
// `serverOptionsFor(app)` gives node:http request and response classes whose prototypes are the
// app's own, so the prototype Express sets on every request is the one it already has.
import http from 'node:http';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import type { ErrorCode } from '../catalog/errors.ts';
import type { Logger } from '../logger.ts';
import { isPreflight } from './cors.ts';
import { HttpRefusal } from './errors.ts';
import { exchangeOf, refuseBody, sendError, sendPreflight } from './exchange.ts';
import { methodNotAllowed, type Routes } from './operation-routes.ts';
import { SERVER_OPTIONS } from './listener-limits.ts';
import { traceRequestId } from '../tracing.ts';

export interface ShellOptions {
  listener: 'api' | 'stream';
  logger: Logger;
  /** The operator's middleware, run in order for every request before anything of the listener's. */
  middleware?: readonly RequestHandler[] | undefined;
  /** The listener's routes, tried in order. */
  routes: readonly Routes[];
  /** The 404 message for a path no router answers. */
  notFound(path: string): string;
}

export const MALFORMED_URL = 'The request URL is malformed (bad percent-encoding or characters); encode it and retry.';

export function createShell(options: ShellOptions): Express {
  const { listener, logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.use(enter(listener));
  for (const middleware of options.middleware ?? []) app.use(middleware);
  app.use(answerPreflight(logger));
  for (const add of options.routes) add(app);
  app.use((req, _res, next) => {
    next(new HttpRefusal('not_found', options.notFound(truncate(exchangeOf(req).path))));
  });
  app.use(errorMiddleware(logger));
  return app;
}

/** Names the listener that took the request, for its access line and metrics, and the request's trace by its id. */
export function enter(listener: ShellOptions['listener']): RequestHandler {
  return (req, _res, next) => {
    const exchange = exchangeOf(req);
    exchange.listener = listener;
    traceRequestId(req, exchange.requestId);
    next();
  };
}

/** Answers a CORS preflight on any path, before authentication (browsers send it without credentials). */
export function answerPreflight(logger: Logger): RequestHandler {
  return (req, res, next) => {
    if (isPreflight(req)) sendPreflight(logger, req, res);
    else next();
  };
}

/** Turns whatever reaches Express's error path into the documented error body. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => sendError(logger, req, res, asRefusal(error));
}

const CODE_BY_CLIENT_STATUS: Partial<Record<number, ErrorCode>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  429: 'rate_limited',
};

/**
 * Express's own 400s (a path parameter that does not percent-decode) and a middleware's exposed
 * client errors (`http-errors` style: `status` and `expose`) as the contract's refusals.
 */
function asRefusal(error: unknown): unknown {
  if (error instanceof HttpRefusal || typeof error !== 'object' || error === null) return error;
  const status = (error as { status?: unknown }).status;
  if (error instanceof URIError && status === 400) return new HttpRefusal('invalid_request', MALFORMED_URL);
  const code = typeof status === 'number' ? CODE_BY_CLIENT_STATUS[status] : undefined;
  if (code !== undefined && (error as { expose?: unknown }).expose === true) return new HttpRefusal(code, String((error as { message?: unknown }).message));
  return error;
}

/** Answers one request through exchange.ts, or throws a refusal. */
export type StaticRoute = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

/**
 * Routes outside the contract (docs, documents, health): each answers GET and HEAD, takes no body,
 * and any other method gets 405 with Allow. `name` is what metrics and access lines call it.
 */
export function staticRoutes(routes: Iterable<readonly [path: string, route: StaticRoute, name?: string]>): Routes {
  const list = [...routes];
  return (router) => {
    for (const [path, route, name = path] of list) {
      router
        .route(path)
        .get(async (req, res) => {
          exchangeOf(req).operation = name;
          refuseBody(req);
          await route(req, res);
        })
        .all(methodNotAllowed('GET, HEAD', name));
    }
  };
}

/**
 * Options for http.createServer whose request and response objects are made with `app`'s
 * prototypes (`app.request`, `app.response`). Express sets those prototypes on every request it
 * handles; on objects that already have them, that is a check rather than a change of shape that
 * V8 would have to follow for each object.
 */
export function serverOptionsFor(app: Express): http.ServerOptions {
  return {
    ...SERVER_OPTIONS,
    IncomingMessage: withPrototype(http.IncomingMessage, app.request),
    ServerResponse: withPrototype(http.ServerResponse, app.response),
  };
}

/** A constructor that builds `base`'s objects with `prototype` (which must inherit from `base.prototype`). */
function withPrototype<C>(base: C, prototype: object): C {
  function Derived(...args: unknown[]): object {
    return Reflect.construct(base as unknown as new (...args: unknown[]) => object, args, Derived);
  }
  Derived.prototype = prototype;
  return Derived as unknown as C;
}

function truncate(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
