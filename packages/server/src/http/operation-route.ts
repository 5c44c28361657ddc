// The path every API operation takes: authenticate, authorise, rate-limit, validate, run the
// handler, serialise (with the RateLimit headers of the caller's quota, refusals included). Handlers only ever see a validated request and return { status, body }.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CatalogService } from '../catalog/catalog-service.ts';
import { operations, type ApiOperationId } from '../generated/handlers.gen.ts';
import type { Logger } from '../logger.ts';
import { authorize, clientAddress, type Authenticator } from './auth.ts';
import type { RequestContext } from './context.ts';
import { exchangeOf, refuseBody, sendError, sendJson } from './exchange.ts';
import { handlers } from './handlers/index.ts';
import { InvalidRequest } from '../catalog/errors.ts';
import { assertNoProblem, controlCharacterIn } from './query-string.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { RequestValidator } from './request-validation.ts';

export interface OperationDeps {
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
    let limitHeaders: Record<string, string> | undefined;
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
      sendJson(deps.logger, req, res, result.status, result.body, limitHeaders === undefined ? {} : { ...limitHeaders });
    } catch (error) {
      sendError(deps.logger, req, res, error, limitHeaders);
    }
  };
}

function assertPathPrintable(path: Record<string, string>): void {
  for (const [name, value] of Object.entries(path)) {
    const control = controlCharacterIn(value);
    if (control !== null) throw new InvalidRequest(`Path parameter "${name}" contains the control character ${control}; remove it.`);
  }
}
