// The one path every operation of either listener takes, driven by the contract's operation table:
// an Express router with one route per operation (operation-routes.ts), each running
//
//   refuse a body → authenticate (the table's credential scheme)
//   → authorise (the table's plans) → validate path, query and headers (request-validation.ts)
//   → take one request from the key's quota → handler → the one writer (exchange.ts)
//
// A request refused before the quota is taken does not count against it. Every refusal and every
// answer leaves through exchange.ts, with X-Request-Id, the caller's RateLimit headers once known,
// and one access line. A request not answered within `requestTimeoutMs` gets 503 and its late
// answer is dropped (a late stream is returned unread, which releases it); the deadline ends once
// a streamed answer's head is out.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidRequest } from '../catalog/errors.ts';
import { operations, type OperationId } from '@catalog/contract';
import type { Logger } from '../logger.ts';
import { authorize, clientAddress, type Authenticator } from './auth.ts';
import { HttpRefusal } from './errors.ts';
import { exchangeOf, refuseBody, sendError, sendJson, sendStream, type StreamWriting } from './exchange.ts';
import type { Handler, Handlers } from './handler-types.ts';
import { operationRoutes, operationsOf, type Listener, type OperationOf, type Routes } from './operation-routes.ts';
import { assertNoProblem, controlCharacterIn } from './query-string.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { RequestValidator } from './request-validation.ts';
import { closeBody, isStreamBody } from '../stream/readiness.ts';
import { defaultOf } from '../settings.ts';

/** The deadline of a request when the listener names none: `--request-timeout-ms`'s default. */
export const DEFAULT_REQUEST_TIMEOUT_MS = defaultOf('request-timeout-ms');

export interface PipelineDeps<L extends Listener, TServices> {
  listener: L;
  /** One handler for each of the listener's operations in the contract's table. */
  handlers: Handlers<OperationOf<L>, TServices>;
  /** What the listener's handlers use besides the request (the catalog, the price stream). */
  services: TServices;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  validate: RequestValidator;
  logger: Logger;
  /** A request still unanswered after this long gets 503 (its late answer is dropped). */
  requestTimeoutMs: number;
  /** How streamed answers are written; required when the listener has a streamed operation. */
  streaming?: StreamWriting;
}

/** The listener's operations as Express routes, each running the pipeline above. */
export function createOperationPipeline<L extends Listener, TServices>(deps: PipelineDeps<L, TServices>): Routes {
  const run = createRunner(deps);
  return operationRoutes(operationsOf(deps.listener), (operationId, params, req, res) => void run(operationId, params, req, res));
}

function createRunner<L extends Listener, TServices>(deps: PipelineDeps<L, TServices>) {
  const { logger } = deps;
  return async (operationId: OperationOf<L>, path: Record<string, string>, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const exchange = exchangeOf(req);
    // One handler shape for the dispatch: the validator below proves the request it receives.
    const handler = deps.handlers[operationId] as unknown as Handler<OperationId, TServices>;
    let limitHeaders: Record<string, string> | undefined;
    let timedOut = false;
    // Synchronous work cannot be interrupted: the deadline is kept at the request's awaits (the
    // key store, the catalog store, the price log), which is where an unbounded wait can happen.
    const deadline = setTimeout(() => {
      timedOut = true;
      const seconds = Math.round(deps.requestTimeoutMs / 100) / 10;
      sendError(logger, req, res, new HttpRefusal('service_unavailable', `The request did not complete within ${seconds} s; retry shortly.`), limitHeaders);
    }, deps.requestTimeoutMs);
    try {
      refuseBody(req);
      const authenticated = deps.authenticator.authenticate(req.headers.authorization, operations[operationId].credential, clientAddress(req));
      const caller = authenticated instanceof Promise ? await authenticated : authenticated;
      authorize(operationId, caller.plan);
      assertNoProblem(exchange.query);
      assertPathPrintable(path);
      const { query, params, headers } = deps.validate(operationId, path, exchange.query.values, req.headers);
      const quota = deps.rateLimiter.take(caller.key, caller.plan);
      if (quota !== null) limitHeaders = await quota;
      const context = { ...deps.services, requestId: exchange.requestId, key: caller.key, plan: caller.plan, head: req.method === 'HEAD' };
      const result = await handler({ query, params, headers } as never, context);
      const answerHeaders = limitHeaders === undefined ? { ...result.headers } : { ...limitHeaders, ...result.headers };
      if (isStreamBody(result.body)) {
        if (timedOut || deps.streaming === undefined) {
          await closeBody(result.body);
          if (timedOut) return;
          throw new Error(`the ${deps.listener} listener cannot write the stream of ${operationId}`);
        }
        clearTimeout(deadline);
        // Not awaited: sendStream never rejects, and this request's state (its deadline, its
        // headers, this frame) is not kept for as long as the stream is open.
        void sendStream(logger, req, res, result.status, answerHeaders, result.body, deps.streaming);
        return;
      }
      if (!timedOut) sendJson(logger, req, res, result.status, result.body, answerHeaders);
    } catch (error) {
      if (!timedOut) sendError(logger, req, res, error, limitHeaders);
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
