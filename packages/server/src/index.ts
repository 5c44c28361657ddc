// The server as a library, for an Express application of your own (embed.ts shows how):
// createApp is the API listener `catalog serve` runs, catalogRouter the same API to mount under a
// path, openCatalog the stores both need.
export { catalogRouter, createApp } from './app.ts';
export type { AppDeps, ReadinessCheck } from './dependencies.ts';
export { openCatalog, type OpenCatalog, type OpenCatalogOptions } from './embed.ts';
export { serverOptionsFor } from './http/express-shell.ts';
export type { ListenerName, MiddlewareModule } from './http/operator-middleware.ts';
export { createLogger, createServiceLogger, type Logger } from './logger.ts';
