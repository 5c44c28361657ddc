// createApp builds the catalog API's Express application and listens on nothing (src/main.ts
// owns listeners and signals); catalogRouter is the same API as a router to mount in an Express
// app of your own. One path for every request (http/express-shell.ts): the operator's middleware,
// CORS preflights, then the contract's operations (http/operation-pipeline.ts: one route per
// operation of the contract's table, each running credential, plans, parameters, quota, deadline
// and handler), then the routes outside the contract (docs, documents, health and readiness), 404
// and 405. Every response, success or refusal, leaves through http/exchange.ts with an
// X-Request-Id and one access log line.
//
// Why the operations do not go through openapi-backend's handleRequest: its router re-derives its
// operation list on every request; Express routes built from the operation table call the
// validators openapi-backend compiled (bench/get-product-routing.ts compares them).
import { Router, type Express } from 'express';
import type { Routes } from './http/operation-routes.ts';
import { asyncapiDocument, openapiDocument } from '@catalog/contract/documents';
import { createAuthenticator } from './http/auth.ts';
import { docsResources } from './http/docs.ts';
import { exchangeOf, sendError, sendJson, sendResource } from './http/exchange.ts';
import { handlers } from './http/handlers/index.ts';
import { createOperationPipeline, DEFAULT_REQUEST_TIMEOUT_MS } from './http/operation-pipeline.ts';
import { createRateLimiter, NO_RATE_LIMITS } from './http/rate-limit.ts';
import { requestValidator } from './http/request-validation.ts';
import { answerPreflight, createShell, enter, errorMiddleware, staticRoutes, type StaticRoute } from './http/express-shell.ts';
import { apiServices, type AppDeps } from './dependencies.ts';
import { ServiceUnavailable, ShuttingDown, StillStarting } from './catalog/errors.ts';

export type { AppDeps, ReadinessCheck } from './dependencies.ts';

/** A dependency that does not answer a readiness ping within this time counts as down. */
const READINESS_TIMEOUT_MS = 2_000;

/**
 * The API listener: `http.createServer(serverOptionsFor(app), app)`. Middleware in
 * `deps.middleware` runs for every request, before the operations (which still authenticate and
 * validate whatever it does).
 */
export function createApp(deps: AppDeps): Express {
  return createShell({
    listener: 'api',
    logger: deps.logger,
    middleware: deps.middleware,
    routes: apiRoutes(deps),
    notFound: (path) => `No resource at ${path}; see /docs for the operations.`,
  });
}

/**
 * The API as an Express router, to mount in an app of your own (`app.use('/catalog',
 * catalogRouter(deps))`): the same operations and routes as createApp, paths relative to the
 * mount point. A path it does not know falls through to the app's next routes; whatever it
 * answers or refuses is in the contract's shape.
 */
export function catalogRouter(deps: AppDeps): Router {
  const router = Router().use(enter('api'), answerPreflight(deps.logger));
  for (const add of apiRoutes(deps)) add(router);
  return router.use(errorMiddleware(deps.logger));
}

function apiRoutes(deps: AppDeps): Routes[] {
  const { logger } = deps;
  const rateLimiter = deps.rateLimiter ?? createRateLimiter(NO_RATE_LIMITS);
  const operations = createOperationPipeline({
    listener: 'api',
    handlers,
    services: apiServices(deps),
    authenticator: createAuthenticator(deps.keys, rateLimiter),
    rateLimiter,
    validate: requestValidator(),
    logger,
    requestTimeoutMs: deps.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  });
  const readiness = deps.readiness ?? [{ name: 'catalog database', ping: () => deps.catalog.ping() }];

  const readyz: StaticRoute = async (req, res) => {
    const results = await Promise.all(
      readiness.map(async (check) => {
        try {
          await withTimeout(check.ping(), READINESS_TIMEOUT_MS);
          return null;
        } catch (error) {
          if (error instanceof ShuttingDown) return error;
          // Polled every few seconds while a large index loads: one line at start and one when
          // loaded say it (main.ts); a warning with a stack per poll would bury the real failures.
          if (error instanceof StillStarting) logger.debug('not ready yet', { check: check.name, request_id: exchangeOf(req).requestId, reason: error.message });
          else logger.warn('readiness check failed', { check: check.name, request_id: exchangeOf(req).requestId, error });
          return check.name;
        }
      }),
    );
    const down = results.filter((name): name is string => typeof name === 'string');
    const shuttingDown = results.find((result) => result instanceof ShuttingDown);
    if (down.length === 0 && shuttingDown === undefined) sendJson(logger, req, res, 200, { status: 'ok' });
    else sendError(logger, req, res, shuttingDown ?? new ServiceUnavailable(down.join(' and ')));
  };
  // Operational routes: not in the contract, so they stay off the validation path.
  const outside = staticRoutes([
    ['/healthz', (req, res) => sendJson(logger, req, res, 200, { status: 'ok' })],
    ['/readyz', readyz],
    ...[...docsResources(openapiDocument, asyncapiDocument)].map(
      ([path, found]): [string, StaticRoute, string] => [path, (req, res) => sendResource(logger, req, res, found), path.startsWith('/docs/assets/') ? '/docs/assets' : path],
    ),
  ]);
  return [operations, outside];
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
