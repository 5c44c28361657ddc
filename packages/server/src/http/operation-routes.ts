// The contract's operation table as Express routes: one route per operation of a listener, its
// method and path converted to a pattern Express matches (routePattern), never listed by hand. A
// path answered for another method gets 405 with Allow (a GET answers HEAD too; Express sends the
// head without the body).
//
// Matching follows Express's defaults, which are the conventions clients rely on: literal segments
// compare case-insensitively, one trailing slash is ignored, a path parameter is one non-empty
// segment, percent-decoded by Express (an encoded slash stays inside the value). Broken
// percent-encoding in a parameter reaches the error middleware as a 400 URIError (express-shell.ts).
import type { RequestHandler, Router } from 'express';
import { operations, type OperationId } from '@catalog/contract';
import { HttpRefusal } from './errors.ts';
import { exchangeOf } from './exchange.ts';
import { traceRoute } from '../tracing.ts';

export type Listener = (typeof operations)[OperationId]['listener'];

/** The operations of the contract's table that `L` serves. */
export type OperationOf<L extends Listener> = { [Id in OperationId]: (typeof operations)[Id]['listener'] extends L ? Id : never }[OperationId];

export function operationsOf<L extends Listener>(listener: L): OperationOf<L>[] {
  return (Object.keys(operations) as OperationId[]).filter((id): id is OperationOf<L> => operations[id].listener === listener);
}

/** `/v2/products/{id}` → `/v2/products/:id`: the route's name in traces. */
export function expressPath(template: string): string {
  return template.replace(/\{([^}]+)\}/g, ':$1');
}

/**
 * `/v2/products/{id}` → the pattern Express routes it by: literal segments compared
 * case-insensitively, one trailing slash ignored, `{id}` one non-empty segment captured as `id`
 * (Express percent-decodes it). Express's router matches a pattern itself and hands the handler a
 * plain params object; for a path string, path-to-regexp makes each match's params an object
 * without a prototype, which V8 keeps as a dictionary and whose store misses its inline cache on
 * every request.
 */
export function routePattern(template: string): RegExp {
  const source = template.replace(/[.*+?^$()|[\]\\/]/g, '\\$&').replace(/\{([^}]+)\}/g, (_all, name: string) => {
    if (!/^[A-Za-z_$][\w$]*$/.test(name)) throw new Error(`path parameter "${name}" of ${template} is not a name a pattern can capture`);
    return `(?<${name}>[^/]+)`;
  });
  return new RegExp(`^${source}\\/?$`, 'i');
}

/** `/v2/products/{id}/prices` → `['id']`. */
function pathParameterNames(template: string): string[] {
  return [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '');
}

/** Runs one operation for a request the router matched, with its decoded path parameters. */
export type RunOperation<Id extends OperationId> = (operationId: Id, params: Record<string, string>, req: Parameters<RequestHandler>[0], res: Parameters<RequestHandler>[1]) => void;

/** The methods a route of `method` answers (`allow`), and the 405 for any other. */
export function methodNotAllowed(allow: string, name: string): RequestHandler {
  return (req, _res, next) => {
    exchangeOf(req).operation = name;
    next(new HttpRefusal('method_not_allowed', `${req.method} is not allowed here; use ${allow.split(', ')[0]}.`, { allow }));
  };
}

/**
 * Routes added straight to the app or router that serves them (`app.route(path)`), so a request
 * walks one router's layers rather than entering a nested router.
 */
export type Routes = (into: Pick<Router, 'route' | 'use'>) => void;

export function operationRoutes<Id extends OperationId>(operationIds: readonly Id[], run: RunOperation<Id>): Routes {
  return (router) => {
    for (const operationId of operationIds) {
      const { method, path } = operations[operationId];
      const allow = method === 'GET' ? 'GET, HEAD' : method;
      const names = pathParameterNames(path);
      const route = expressPath(path);
      const answer: RequestHandler = (req, res) => {
        exchangeOf(req).operation = operationId;
        traceRoute(req, route);
        // The operation's own parameters only, whatever else a router mounted above put in params.
        const params: Record<string, string> = {};
        for (const name of names) params[name] = (req.params as Record<string, string>)[name] ?? '';
        run(operationId, params, req, res);
      };
      const routed = router.route(routePattern(path) as unknown as string);
      routed[method.toLowerCase() as 'get'](answer);
      routed.all(methodNotAllowed(allow, operationId));
    }
  };
}
