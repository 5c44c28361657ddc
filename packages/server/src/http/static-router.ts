// The routes outside the contract (the docs, the documents, health and readiness) and the answer
// to a path that names nothing: the shell behind the operation pipeline on both listeners. Paths
// match as the operation router's do (literal segments case-insensitively, one trailing slash
// ignored); a route answers GET and HEAD, takes no body, and any other method gets 405 with
// Allow. Every answer, refusals included, leaves through the one writer (exchange.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.ts';
import { HttpRefusal } from './errors.ts';
import { exchangeOf, refuseBody, sendError } from './exchange.ts';

/** Answers one request; sends its own answer through exchange.ts, or throws a refusal. */
export type StaticRoute = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface StaticRouterOptions {
  logger: Logger;
  /** Routes by path, and the name metrics and access lines give each (its path when absent). */
  routes: Iterable<readonly [path: string, route: StaticRoute, name?: string]>;
  /** The 404 message for a path that names no route and no operation. */
  notFound(path: string): string;
}

const ALLOW = 'GET, HEAD';

export function createStaticRouter(options: StaticRouterOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { logger } = options;
  const routes = new Map<string, { route: StaticRoute; name: string }>();
  for (const [path, route, name] of options.routes) routes.set(normalise(path), { route, name: name ?? path });

  return (req, res) => {
    const exchange = exchangeOf(req);
    const found = routes.get(normalise(exchange.path));
    if (found === undefined) {
      sendError(logger, req, res, new HttpRefusal('not_found', options.notFound(truncate(exchange.path))));
      return;
    }
    exchange.operation = found.name;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(logger, req, res, new HttpRefusal('method_not_allowed', `${req.method ?? 'This method'} is not allowed here; use GET.`, { allow: ALLOW }));
      return;
    }
    const fail = (error: unknown): void => sendError(logger, req, res, error);
    try {
      refuseBody(req);
      const answered = found.route(req, res);
      if (answered instanceof Promise) answered.catch(fail);
    } catch (error) {
      fail(error);
    }
  };
}

function normalise(path: string): string {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.toLowerCase();
}

function truncate(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
