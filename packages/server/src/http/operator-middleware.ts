// The operator's Express middleware for `catalog serve --middleware <module>`: an ES module whose
// default export is called once per listener with its name and returns the middleware that runs,
// in order, for every request of that listener before anything of the service's (express-shell.ts).
// The same module is loaded by the API thread and the stream thread, each calling it for its own
// listener; return nothing for a listener it has no middleware for.
//
//   export default (listener) => (listener === 'api' ? [compression()] : []);
//
// A module that cannot be loaded, has no default function, or returns something other than
// middleware stops the service at start with a message naming the module.
import { pathToFileURL } from 'node:url';
import type { RequestHandler } from 'express';

export type ListenerName = 'api' | 'stream';

/** The default export of a middleware module. */
export type MiddlewareModule = (listener: ListenerName) => RequestHandler | readonly RequestHandler[] | undefined | Promise<RequestHandler | readonly RequestHandler[] | undefined>;

export async function loadOperatorMiddleware(modulePath: string | undefined, listener: ListenerName): Promise<RequestHandler[]> {
  if (modulePath === undefined) return [];
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(modulePath).href)) as { default?: unknown };
  } catch (error) {
    throw new Error(`--middleware ${modulePath} could not be loaded: ${(error as Error).message}`, { cause: error });
  }
  if (typeof loaded.default !== 'function') throw new Error(`--middleware ${modulePath} must export a default function (listener) => middleware`);
  const made: unknown = await (loaded.default as MiddlewareModule)(listener);
  const middleware = made === undefined ? [] : Array.isArray(made) ? made : [made];
  if (!middleware.every((one) => typeof one === 'function')) {
    throw new Error(`--middleware ${modulePath} returned something other than Express middleware for the ${listener} listener`);
  }
  return middleware as RequestHandler[];
}
