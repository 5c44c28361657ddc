// The path every API operation takes: authenticate, authorise, rate-limit, validate, run the
// handler, serialise (with the RateLimit headers of the caller's quota, refusals included). Handlers only ever see a validated request and return { status, body }.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CatalogService } from '../catalog/catalog-service.ts';
import { operations, type ApiOperationId } from '@catalog/contract';
import type { Logger } from '../logger.ts';
import { authorize, clientAddress, type Authenticator } from './auth.ts';
import type { RequestContext } from './context.ts';
import { exchangeOf, refuseBody, sendError, sendJson } from './exchange.ts';
import { handlers } from './handlers/index.ts';
import { InvalidRequest } from '../catalog/errors.ts';
import { HttpRefusal } from './errors.ts';
import { assertNoProblem, controlCharacterIn } from './query-string.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { RequestValidator } from './request-validation.ts';

export interface OperationDeps {
  /** A request still unanswered after this long gets 503 (its late answer is dropped). */
  requestTimeoutMs: number;
  catalog: CatalogService;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  validate: RequestValidator;
  logger: Logger;
}

type AnyHandler = (request: unknown, context: RequestContext) => Promise<{ status: number; body: unknown }> | { status: number; body: unknown };

export type OperationRunner = (req: IncomingMessage, res: ServerResponse, path: Record<string, string>) => Promise<void>;

/** Serves one operation given its decoded path parameters; never rejects. */
export function operationRunner(operationId: ApiOperationId, deps: OperationDeps): OperationRunner {
  // The validator proves the request matches the operation's generated request type.
  const handler = handlers[operationId] as AnyHandler;
  return async (req, res, path) => {
    const exchange = exchangeOf(req);
    exchange.operation = operationId;
    let limitHeaders: Record<string, string> | undefined;
    let timedOut = false;
    // Synchronous work cannot be interrupted: the deadline is kept at the request's awaits (the
    // key store, the catalog store), which is where an unbounded wait can happen.
    const deadline = setTimeout(() => {
      timedOut = true;
      const seconds = Math.round(deps.requestTimeoutMs / 100) / 10;
      sendError(deps.logger, req, res, new HttpRefusal('service_unavailable', `The request did not complete within ${seconds} s; retry shortly.`), limitHeaders);
    }, deps.requestTimeoutMs);
    try {
      refuseBody(req);
      const authenticated = deps.authenticator.authenticate(req.headers.authorization, operations[operationId].credential, clientAddress(req));
      const caller = authenticated instanceof Promise ? await authenticated : authenticated;
      authorize(operationId, caller.plan);
      const quota = deps.rateLimiter.take(caller.key, caller.plan);
      if (quota !== null) limitHeaders = await quota;
      assertNoProblem(exchange.query);
      assertPathPrintable(path);
      const { query, params } = deps.validate(operationId, path, exchange.query.values);
      const result = await handler(
        { query, params, headers: {} },
        { requestId: exchange.requestId, plan: caller.plan, catalog: deps.catalog },
      );
      if (!timedOut) sendJson(deps.logger, req, res, result.status, result.body, limitHeaders === undefined ? {} : { ...limitHeaders });
    } catch (error) {
      if (!timedOut) sendError(deps.logger, req, res, error, limitHeaders);
    } finally {
      clearTimeout(deadline);
    }
  };
}

function assertPathPrintable(path: Record<string, string>): void {
  for (const [name, value] of Object.entries(path)) {
    const control = controlCharacterIn(value);
    if (control !== null) throw new InvalidRequest(`Path parameter "${name}" contains the control character ${control}; remove it.`);
  }
}
