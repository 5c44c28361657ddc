// createApp builds the catalog API's request listener and listens on nothing (src/main.ts owns
// listeners and signals). Requests that name a contract operation take the one operation pipeline
// (http/operation-pipeline.ts: the contract's route, credential, plans and parameters, then the
// handler and the one writer), the same pipeline that admits the price stream on its own
// listener; everything else goes to an Express application, the shell (docs, health, 404, 405),
// with no Express internals patched. Every response, success or refusal, leaves through
// http/exchange.ts with an X-Request-Id and one access log line.
//
// Why the operations do not go through openapi-backend's handleRequest: its router re-derives its
// operation list on every request, several times the CPU per request of matching the operation
// table here and calling the validators it compiled (measured with bench/get-product-routing.ts;
// figures in bench/README.md). Dispatching operations before Express's per-request set-up saves
// Express's share as well.
import type { RequestListener } from 'node:http';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { CatalogService } from './catalog/catalog-service.ts';
import { asyncapiDocument, openapiDocument } from '@catalog/contract/documents';
import { createAuthenticator } from './http/auth.ts';
import { answerPreflight } from './http/cors.ts';
import { docsResources, sendResource } from './http/docs.ts';
import { HttpRefusal } from './http/errors.ts';
import { exchangeOf, refuseBody, sendError, sendJson} from './http/exchange.ts';
import { handlers } from './http/handlers/index.ts';
import { createOperationPipeline, DEFAULT_REQUEST_TIMEOUT_MS } from './http/operation-pipeline.ts';
import { createRateLimiter, NO_RATE_LIMITS, type RateLimiter } from './http/rate-limit.ts';
import { requestValidator } from './http/request-validation.ts';
import type { Logger } from './logger.ts';
import type { CatalogStore } from './store/catalog-store.ts';
import type { KeyStore } from './store/key-store.ts';
import type { PriceLog } from './prices/price-log.ts';
import { ProductPrices } from './prices/product-prices.ts';
import { ServiceUnavailable } from './catalog/errors.ts';

export interface ReadinessCheck {
  name: string;
  /** Resolves when the dependency answers; rejects (ideally with ServiceUnavailable) otherwise. */
  ping(): Promise<void>;
}

export interface AppDeps {
  catalog: CatalogStore;
  /** The latest-price store behind getProductPrices; without it that operation answers 503. */
  priceLog?: Pick<PriceLog, 'latestPrices'>;
  keys: KeyStore;
  logger: Logger;
  /** Quotas per key and failed-authentication allowances; absent means no limits. */
  rateLimiter?: RateLimiter;
  /** A request unanswered after this long gets 503; DEFAULT_REQUEST_TIMEOUT_MS when absent. */
  requestTimeoutMs?: number;
  /** Checked by /readyz; defaults to the catalog store's ping. */
  readiness?: ReadinessCheck[];
}

const ALLOW = 'GET, HEAD';
/** A dependency that does not answer a readiness ping within this time counts as down. */
const READINESS_TIMEOUT_MS = 2_000;

export function createApp(deps: AppDeps): RequestListener {
  const { logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  // Query strings are parsed by http/query-string.ts, which refuses repeats and bad encoding.
  app.set('query parser', false);

  const rateLimiter = deps.rateLimiter ?? createRateLimiter(NO_RATE_LIMITS);
  const dispatch = createOperationPipeline({
    listener: 'api',
    handlers,
    services: { catalog: new CatalogService(deps.catalog), prices: new ProductPrices(deps.priceLog) },
    authenticator: createAuthenticator(deps.keys, rateLimiter),
    rateLimiter,
    validate: requestValidator(),
    logger,
    requestTimeoutMs: deps.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  });
  const readiness = deps.readiness ?? [{ name: 'catalog database', ping: () => deps.catalog.ping() }];
  const docs = docsResources(openapiDocument, asyncapiDocument);

  const methodNotAllowed = (req: Request, res: Response): void => {
    sendError(
      logger,
      req,
      res,
      new HttpRefusal('method_not_allowed', `${req.method} is not allowed here; use GET.`, { allow: ALLOW }),
    );
  };

  // Operational endpoints: not in the contract, so they stay off the validation path.
  // Operational GETs refuse a body like the operations do (refuseBody), before answering.
  const withoutBody =
    (route: (req: Request, res: Response) => void | Promise<void>) =>
    async (req: Request, res: Response): Promise<void> => {
      try {
        refuseBody(req);
      } catch (error) {
        sendError(logger, req, res, error);
        return;
      }
      await route(req, res);
    };
  app.get('/healthz', withoutBody((req, res) => sendJson(logger, req, res, 200, { status: 'ok' })));
  app.get('/readyz', withoutBody(async (req, res) => {
    const results = await Promise.all(
      readiness.map(async (check) => {
        try {
          await withTimeout(check.ping(), READINESS_TIMEOUT_MS);
          return null;
        } catch (error) {
          logger.warn('readiness check failed', { check: check.name, request_id: exchangeOf(req).requestId, error });
          return check.name;
        }
      }),
    );
    const down = results.filter((name): name is string => name !== null);
    if (down.length === 0) {
      sendJson(logger, req, res, 200, { status: 'ok' });
      return;
    }
    sendError(logger, req, res, new ServiceUnavailable(down.join(' and ')));
  }));
  for (const [path, found] of docs) app.get(path, withoutBody((req, res) => sendResource(logger, req, res, found)));
  for (const path of ['/healthz', '/readyz', ...docs.keys()]) app.all(path, methodNotAllowed);

  app.use((req: Request, res: Response) => {
    sendError(logger, req, res, new HttpRefusal('not_found', `No resource at ${truncate(exchangeOf(req).path)}; see /docs for the operations.`));
  });

  // Errors Express itself raises (a path parameter with broken percent-encoding, for one) carry a
  // 4xx `status`; anything else is unexpected and becomes a logged 500.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = (error as { status?: unknown } | null)?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      sendError(logger, req, res, new HttpRefusal('invalid_request', 'The request URL is malformed (bad percent-encoding or characters); encode it and retry.'));
      return;
    }
    sendError(logger, req, res, error);
  });

  return (req, res) => {
    if (!answerPreflight(req, res) && !dispatch(req, res)) app(req, res);
  };
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function truncate(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
