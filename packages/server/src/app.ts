// createApp builds the catalog API's request listener and listens on nothing (src/main.ts owns
// listeners and signals). One path for every request: the operation pipeline
// (http/operation-pipeline.ts) answers CORS preflights and takes every request that names a
// contract operation (the contract's route, credential, plans and parameters, then the handler and
// the one writer), the same pipeline that admits the price stream on its own listener; the static
// router (http/static-router.ts) answers the rest: docs, documents, health and readiness, 404 and
// 405. Every response, success or refusal, leaves through http/exchange.ts with an X-Request-Id
// and one access log line.
//
// Why the operations do not go through openapi-backend's handleRequest: its router re-derives its
// operation list on every request, several times the CPU per request of matching the operation
// table here and calling the validators it compiled (measured with bench/get-product-routing.ts;
// figures in bench/README.md).
import type { RequestListener } from 'node:http';
import { asyncapiDocument, openapiDocument } from '@catalog/contract/documents';
import { createAuthenticator } from './http/auth.ts';
import { docsResources } from './http/docs.ts';
import { exchangeOf, sendError, sendJson, sendResource } from './http/exchange.ts';
import { handlers } from './http/handlers/index.ts';
import { createOperationPipeline, DEFAULT_REQUEST_TIMEOUT_MS } from './http/operation-pipeline.ts';
import { createRateLimiter, NO_RATE_LIMITS } from './http/rate-limit.ts';
import { requestValidator } from './http/request-validation.ts';
import { createStaticRouter, type StaticRoute } from './http/static-router.ts';
import { apiServices, type AppDeps } from './dependencies.ts';
import { ServiceUnavailable, ShuttingDown, StillStarting } from './catalog/errors.ts';

export type { AppDeps, ReadinessCheck } from './dependencies.ts';

/** A dependency that does not answer a readiness ping within this time counts as down. */
const READINESS_TIMEOUT_MS = 2_000;

export function createApp(deps: AppDeps): RequestListener {
  const { logger } = deps;
  const rateLimiter = deps.rateLimiter ?? createRateLimiter(NO_RATE_LIMITS);
  const dispatch = createOperationPipeline({
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
  const shell = createStaticRouter({
    logger,
    routes: [
      ['/healthz', (req, res) => sendJson(logger, req, res, 200, { status: 'ok' })],
      ['/readyz', readyz],
      ...[...docsResources(openapiDocument, asyncapiDocument)].map(
        ([path, found]): [string, StaticRoute, string] => [path, (req, res) => sendResource(logger, req, res, found), path.startsWith('/docs/assets/') ? '/docs/assets' : path],
      ),
    ],
    notFound: (path) => `No resource at ${path}; see /docs for the operations.`,
  });

  return (req, res) => {
    if (!dispatch(req, res)) shell(req, res);
  };
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
