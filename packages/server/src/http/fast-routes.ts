// Exact-path dispatch for the API operations, ahead of Express's router. Express's router walks
// its layers and re-matches path patterns per request; a Map look-up (and one prefix for the
// single parameterised path) does the same job for the paths clients actually send. Anything it
// does not recognise exactly (case variants, trailing slashes, other paths) falls through to the
// Express routes, which remain the reference behaviour. Measured in app.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { operations, type ApiOperationId } from '@catalog/contract';
import { exchangeOf } from './exchange.ts';
import type { OperationRunner } from './operation-route.ts';

interface ParamRoute {
  prefix: string;
  name: string;
  run: OperationRunner;
}

/** Returns true when it took the request (a GET or HEAD on an exact operation path). */
export type FastRouter = (req: IncomingMessage, res: ServerResponse) => boolean;

export function createFastRouter(runners: ReadonlyMap<ApiOperationId, OperationRunner>): FastRouter {
  const exact = new Map<string, OperationRunner>();
  const withParam: ParamRoute[] = [];
  for (const [operationId, run] of runners) {
    const path = operations[operationId].path;
    const open = path.indexOf('{');
    if (open === -1) exact.set(path, run);
    else if (path.endsWith('}') && path.indexOf('{', open + 1) === -1) {
      withParam.push({ prefix: path.slice(0, open), name: path.slice(open + 1, -1), run });
    }
  }
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const path = exchangeOf(req).path;
    const run = exact.get(path);
    if (run !== undefined) {
      void run(req, res, {});
      return true;
    }
    for (const route of withParam) {
      if (!path.startsWith(route.prefix)) continue;
      const raw = path.slice(route.prefix.length);
      // Encoded or nested values take Express's route, which decodes and refuses them properly.
      if (raw === '' || raw.includes('/') || raw.includes('%')) return false;
      void route.run(req, res, { [route.name]: raw });
      return true;
    }
    return false;
  };
}
