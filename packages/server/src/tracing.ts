// OpenTelemetry tracing: one trace per request, from the HTTP server span (named by the Express
// route) down to its PostgreSQL and Redis calls, exported over OTLP.
//
// Guarantees:
// - Off unless asked for: `--tracing on` (CATALOG_TRACING=on), or the standard variables
//   (OTEL_TRACES_EXPORTER other than `none`, OTEL_EXPORTER_OTLP_ENDPOINT or
//   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); OTEL_SDK_DISABLED=true always wins. Off, nothing of the
//   SDK is loaded and nothing is patched: `traceRequestId` is one boolean test.
// - On, the Node SDK reads every other OTEL_* variable as operators expect (exporter, protocol,
//   endpoint, headers, sampler, propagators, resource attributes); service.name is `catalog`
//   unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES name it. Metrics and logs stay with
//   Prometheus and pino: the SDK starts neither.
// - Only requests start traces: pg and ioredis spans need a parent, so background work (the
//   storefront index's loading; the price hub's follow, which runs in its own async context)
//   traces nothing; probes are not traced.
//
// Limits and failure modes:
// - Patching happens as modules load, so tracing must start before express, pg, ioredis (or a
//   module importing them) are first imported in the thread: entries `await startTracing()` and
//   then `await import()` the rest. A driver loaded earlier is silently untraced. Each thread
//   (the stream thread too) starts its own.
// - ESM imports of these CommonJS packages bypass require(): an in-thread module hook
//   (import-in-the-middle's `module.registerHooks`, Node >= 24.11.1) hands them to the
//   instrumentations. node:http is patched through require(), so it is required here once.
// - An unreachable collector loses spans and never fails a request: the exporter retries, then
//   drops, and says so through `logger.warn`. `shutdown()` exports what is queued, waits for it
//   SHUTDOWN_EXPORT_MS at most and never throws (the exporter's retries may still hold the
//   process up to OTEL_EXPORTER_OTLP_TIMEOUT before it exits).
// - Starting loads the SDK and its exporters: a start-up cost paid only when on.
import { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { ProxyTracerProvider, Span } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { Logger } from './logger.ts';

/** The attribute naming a request on its server span: the X-Request-Id the answer carries. */
export const REQUEST_ID_ATTRIBUTE = 'http.request.id';

/** How long shutdown() waits for the last export: telemetry must not hold up a rolling restart. */
const SHUTDOWN_EXPORT_MS = 2_000;

/** Paths polled by probes and scrapers: traced, they would bury the requests. */
const UNTRACED_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The packages whose ESM imports the module hook hands to the instrumentations, by resolved URL:
 * a bare specifier would miss imports by path (vitest imports its externals so).
 */
const INSTRUMENTED_PACKAGES = /\/node_modules\/(?:express|router|pg|pg-pool|ioredis)\//u;

export interface TracingOptions {
  /** The explicit switch (`--tracing on/off`); undefined lets the OTEL_* variables decide. */
  enabled?: boolean | undefined;
  /** Where spans go instead of the exporters OTEL_TRACES_EXPORTER names (tests). */
  exporter?: SpanExporter;
  /** Where the SDK's warnings (exports that failed) go; OTEL_LOG_LEVEL sends them to the console instead. */
  logger?: Pick<Logger, 'warn' | 'error'>;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Exports every finished span now. */
  forceFlush(): Promise<void>;
  /** Exports what is queued (waiting SHUTDOWN_EXPORT_MS at most), then stops; spans after it are dropped. Never rejects. */
  shutdown(): Promise<void>;
}

/** Whether tracing is asked for: by the switch, else by the standard variables. */
export function tracingRequested(enabled: boolean | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return false;
  const exporters = env['OTEL_TRACES_EXPORTER']?.trim() ?? '';
  if (exporters === 'none') return false;
  if (enabled !== undefined) return enabled;
  return exporters !== '' || Boolean(env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim() || env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim());
}

const OFF: Tracing = { enabled: false, forceFlush: async () => {}, shutdown: async () => {} };

/** Each traced request's server span, recorded by the HTTP instrumentation as the request arrives. */
const serverSpans = new WeakMap<IncomingMessage, Span>();
let recording = false;

/**
 * Names `req`'s trace by its request id (REQUEST_ID_ATTRIBUTE on the server span, whichever
 * Express layer is running). Call it where the id is decided; off, it returns at once.
 */
export function traceRequestId(req: IncomingMessage, requestId: string): void {
  if (!recording) return;
  serverSpans.get(req)?.setAttribute(REQUEST_ID_ATTRIBUTE, requestId);
}

/** The route each traced request was answered by, as traceRoute named it. */
const routes = new WeakMap<IncomingMessage, string>();
/** The span of the Express handler running now (set once tracing starts). */
let activeSpan: () => Span | undefined = () => undefined;

/**
 * Names `req`'s server span by `route` (`/v2/products/:id`) and gives the running Express
 * handler's span that route: Express is given routes as patterns, which its instrumentation would
 * report as they are. Call it from the route's handler; off, it returns at once.
 */
export function traceRoute(req: IncomingMessage, route: string): void {
  if (!recording) return;
  routes.set(req, route);
  activeSpan()?.setAttributes({ 'http.route': route, 'express.name': route });
}

let started: Promise<Tracing> | undefined;

/** Starts tracing when asked for (see the header); once per thread, later calls get the same handle. */
export function startTracing(options: TracingOptions = {}): Promise<Tracing> {
  return (started ??= tracingRequested(options.enabled) ? start(options) : Promise.resolve(OFF));
}

async function start(options: TracingOptions): Promise<Tracing> {
  const { register, supportsSyncHooks } = await import('import-in-the-middle/register-hooks.mjs');
  if (!supportsSyncHooks()) throw new Error(`tracing needs Node >= 24.11.1 for its module hooks; this is ${process.version}`);
  register({ include: [INSTRUMENTED_PACKAGES] });

  const [{ diag, DiagLogLevel, trace }, { NodeSDK }, { BatchSpanProcessor }, { defaultResource, resourceFromAttributes }, http, express, pg, ioredis] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-express'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
  ]);
  const logger = options.logger;
  if (logger !== undefined && process.env['OTEL_LOG_LEVEL'] === undefined) {
    const ignore = (): void => {};
    const fields = (args: unknown[]): Record<string, unknown> => {
      const error = args.find((arg) => arg instanceof Error);
      return error === undefined ? { detail: args } : { error };
    };
    diag.setLogger(
      {
        error: (message, ...args) => logger.error(`tracing: ${message}`, fields(args)),
        warn: (message, ...args) => logger.warn(`tracing: ${message}`, fields(args)),
        info: ignore,
        debug: ignore,
        verbose: ignore,
      },
      DiagLogLevel.WARN,
    );
  }

  const sdk = new NodeSDK({
    // The lowest-priority service.name: the SDK's detectors apply OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME over it.
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': 'catalog' })),
    ...(options.exporter === undefined ? {} : { spanProcessors: [new BatchSpanProcessor({ exporter: options.exporter })] }),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new http.HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '/').split('?', 1)[0]!),
        requestHook: (span, req) => {
          if (req instanceof IncomingMessage) serverSpans.set(req, span);
        },
        // After the instrumentation has named the span by what Express matched (a pattern).
        applyCustomAttributesOnSpan: (span, req) => {
          const route = req instanceof IncomingMessage ? routes.get(req) : undefined;
          if (route === undefined) return;
          span.setAttribute('http.route', route);
          span.updateName(`${req.method ?? 'GET'} ${route}`);
        },
      }),
      // Route handlers only: the shell's middleware are anonymous and routers named by a path they
      // did not match; the server span is named by the route either way.
      new express.ExpressInstrumentation({ ignoreLayersType: [express.ExpressLayerType.MIDDLEWARE, express.ExpressLayerType.ROUTER] }),
      new pg.PgInstrumentation({ requireParentSpan: true }),
      new ioredis.IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  activeSpan = () => trace.getActiveSpan();
  // The HTTP instrumentation patches node:http when it is required; an ESM import never is.
  const require = createRequire(import.meta.url);
  require('node:http');
  require('node:https');
  recording = true;

  let stopping: Promise<void> | undefined;
  return {
    enabled: true,
    forceFlush: async () => {
      // The SDK's provider, behind the API's proxy; none when OTEL_TRACES_EXPORTER named no exporter it knows.
      const provider = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as { forceFlush?: () => Promise<void> };
      await provider.forceFlush?.();
    },
    shutdown: () =>
      (stopping ??= (async () => {
        recording = false;
        // The last export failing or hanging (no collector) is said, never thrown or waited out.
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error(`the collector did not take the last spans within ${SHUTDOWN_EXPORT_MS} ms`)), SHUTDOWN_EXPORT_MS);
        });
        await Promise.race([sdk.shutdown(), late])
          .catch((error: unknown) => logger?.warn('tracing: spans not exported at shutdown', { error }))
          .finally(() => clearTimeout(timer));
      })()),
  };
}
