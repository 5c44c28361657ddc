// The only module that handles process signals. `startService` opens the stores, listens with the
// API app, starts the stream listener (stream-thread.ts) and the price monitors' delivery
// (monitor-thread.ts) in threads of their own, and optionally runs the price simulator;
// `runUntilSignal` drains everything on SIGTERM/SIGINT, or when either thread stops by itself.
//
// Shutdown guarantees: /readyz answers 503 ("shutting down") at once, while both listeners keep
// serving for `shutdownDelayMs` (so a load balancer stops sending first), every answer on either
// port from then on closing its connection; then new connections are refused;
// streams are ended cleanly (so clients reconnect elsewhere with Last-Event-ID); in-flight HTTP
// requests get `shutdownGraceMs` to finish, then their sockets are closed; stores and the price
// log are closed last.
import { createServer, type Server } from 'node:http';
import { createApp } from './app.ts';
import { ServiceUnavailable, ShuttingDown, StillStarting } from './catalog/errors.ts';
import type { Config } from './config.ts';
import { rateLimiterFor } from './http/rate-limit.ts';
import { serverOptionsFor } from './http/express-shell.ts';
import { loadOperatorMiddleware } from './http/operator-middleware.ts';
import { applyListenerLimits, fitConnectionCaps } from './http/listener-limits.ts';
import { listen } from './listen.ts';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { collectProcessMetrics, registry } from './metrics.ts';
import type { Logger } from './logger.ts';
import { openPriceLog } from './prices/open-price-log.ts';
import { runSimulator, syntheticVariants } from './prices/simulator.ts';
import { openCatalogStores } from './store/open-store.ts';
import { storageFullError } from './store/storage-full.ts';
import { sqlitePath } from './storage-url.ts';
import { PRICES_SIMULATE_SETTINGS } from './settings.ts';
import { startStreamThread, type StreamThread } from './stream-thread.ts';
import { startMonitorThread, type MonitorThread } from './monitor-thread.ts';

export interface RunningService {
  apiUrl: string;
  streamUrl: string;
  /** Where /metrics is served, when --metrics-port was given. */
  metricsUrl?: string;
  /** Settles with the reason when a part of the service (the stream thread or a monitor thread) stops by itself. */
  failed: Promise<Error>;
  close(): Promise<void>;
}

function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * The /metrics listener: this thread's registry merged with the other threads' (counters and
 * histograms summed, gauges summed: each thread holds its own part of every value).
 */
function createMetricsServer(threadMetrics: () => Promise<MetricObjectWithValues<MetricValue<string>>[]>[]): Server {
  return createServer((req, res) => {
    if (req.url !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('metrics are at GET /metrics\n');
      return;
    }
    void (async () => {
      try {
        const merged = AggregatorRegistry.aggregate(await Promise.all([registry.getMetricsAsJSON(), ...threadMetrics()]));
        const text = await merged.metrics();
        res.writeHead(200, { 'content-type': merged.contentType, 'content-length': Buffer.byteLength(text) }).end(text);
      } catch (error) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(error as Error).message}\n`);
      }
    })();
  });
}


export async function startService(config: Config, logger: Logger): Promise<RunningService> {
  const stores = await openCatalogStores(config.databaseUrl, logger, { indexSnapshotDir: config.indexSnapshotDir ?? 'default', documentReaders: config.documentReaders }).catch((error: unknown) => {
    // A full disk is said as such, naming it, rather than as the engine's "disk I/O error".
    throw storageFullError('catalog database', config.databaseUrl.startsWith('sqlite:') ? sqlitePath(config.databaseUrl) : undefined, error) ?? error;
  });
  const priceLog = await openPriceLog(config.priceLogUrl, logger).catch(async (error: unknown) => {
    await stores.close();
    throw error;
  });
  let streamAccepting = false;
  let shuttingDown = false;
  const rateLimiter = rateLimiterFor(config, logger);
  if (!(await rateLimiter.connected())) logger.warn('rate limit store unreachable; counting in memory until it answers', { store: 'redis' });
  // A large catalog takes a while to load into the storefront index: not ready until it has, so a
  // balancer sends no listing to wait for it (a listing meanwhile waits, up to its deadline).
  let warmed = stores.catalog.warm === undefined;
  let warming = false;
  const warm = (): void => {
    if (warmed || warming) return;
    warming = true;
    logger.info('loading the storefront index; /readyz answers 503 until it is loaded');
    const started = performance.now();
    stores.catalog.warm!().then(
      () => {
        warmed = true;
        logger.info('storefront index loaded', { ms: Math.round(performance.now() - started) });
      },
      (error: unknown) => {
        warming = false;
        logger.error('storefront index not loaded; trying again at the next readiness check', { error });
      },
    );
  };
  warm();
  const middleware = await loadOperatorMiddleware(config.middleware, 'api').catch(async (error: unknown) => {
    await Promise.allSettled([priceLog.close(), stores.close(), rateLimiter.close()]);
    throw error;
  });
  const app = createApp({
    middleware,
    catalog: stores.catalog,
    priceLog,
    keys: stores.keys,
    monitors: stores.monitors,
    logger,
    rateLimiter,
    requestTimeoutMs: config.requestTimeoutMs,
    readiness: [
      { name: 'catalog database', ping: () => stores.catalog.ping() },
      { name: 'price log', ping: () => priceLog.ping() },
      {
        name: 'storefront index',
        ping: async () => {
          if (warmed) return;
          warm();
          throw new StillStarting('storefront index (loading)');
        },
      },
      // Ready only once the stream listener accepts too, and no longer once shutdown has begun.
      {
        name: 'stream listener',
        ping: async () => {
          if (shuttingDown) throw new ShuttingDown();
          if (!streamAccepting) throw new ServiceUnavailable('stream listener');
        },
      },
    ],
  });
  const caps = fitConnectionCaps({ api: config.maxConnections, stream: config.maxStreamConnections }, logger);
  const apiServer = createServer(serverOptionsFor(app), app);
  applyListenerLimits(apiServer, { maxConnections: caps.api, headersTimeoutMs: config.headersTimeoutMs }, logger);
  // Keep-alive longer than typical load balancer idle timeouts, so they close first.
  apiServer.keepAliveTimeout = 65_000;
  // Once shutdown has begun every answer says `Connection: close` and closes its connection, so
  // clients move to another instance during the delay and no kept-alive connection outlives the
  // listener. Runs before the app, which writes the head.
  apiServer.prependListener('request', (_req, res) => {
    if (shuttingDown) res.shouldKeepAlive = false;
  });

  const simulator = new AbortController();
  let simulation: Promise<void> | undefined;
  let apiUrl: string;
  let stream: StreamThread | undefined;
  let monitors: MonitorThread | undefined;
  try {
    apiUrl = await listen(apiServer, config.port, config.host);
    // The stream listener, and the price monitors' delivery (monitor-thread.ts: its reader and its
    // sender), in threads of their own, started together; either failing to start stops the other.
    const terminalLogs = process.stderr.isTTY === true;
    const [streamStart, monitorStart] = await Promise.allSettled([
      startStreamThread({ ...config, maxStreamConnections: caps.stream, terminalLogs }, logger),
      startMonitorThread({ ...config, terminalLogs }, logger),
    ]);
    if (streamStart.status === 'rejected' || monitorStart.status === 'rejected') {
      // The one that started is closed below.
      if (streamStart.status === 'fulfilled') stream = streamStart.value;
      if (monitorStart.status === 'fulfilled') monitors = monitorStart.value;
      throw streamStart.status === 'rejected' ? streamStart.reason : (monitorStart as PromiseRejectedResult).reason;
    }
    stream = streamStart.value;
    monitors = monitorStart.value;
    streamAccepting = true;
    if (config.simulatePrices > 0) {
      // As many variants as `catalog prices simulate` takes by default.
      const sampled = await stores.catalog.sampleVariants(PRICES_SIMULATE_SETTINGS.variants.default);
      // An empty catalog still gets a lively demo feed.
      const variants = sampled.length > 0 ? sampled : syntheticVariants(PRICES_SIMULATE_SETTINGS.variants.default);
      simulation = runSimulator({ rate: config.simulatePrices, variants, priceLog, signal: simulator.signal, logger }).then(
        () => undefined,
        (error: unknown) => logger.error('price simulator stopped', { error }),
      );
    }
  } catch (error) {
    await Promise.allSettled([closeServer(apiServer, 0), stream?.close(), monitors?.close(), priceLog.close(), stores.close(), rateLimiter.close()]);
    throw error;
  }
  const streamThread = stream;
  const streamUrl = stream.url;
  const monitorThread = monitors;
  let metricsServer: Server | undefined;
  let metricsUrl: string | undefined;
  if (config.metricsPort !== undefined) {
    collectProcessMetrics();
    metricsServer = createMetricsServer(() => [streamThread.metrics(), monitorThread.metrics()]);
    metricsUrl = await listen(metricsServer, config.metricsPort, config.host);
  }
  logger.info('listening', { apiUrl, streamUrl, ...(metricsUrl === undefined ? {} : { metricsUrl }), simulatePrices: config.simulatePrices });

  let closing: Promise<void> | undefined;
  return {
    apiUrl,
    streamUrl,
    ...(metricsUrl === undefined ? {} : { metricsUrl }),
    failed: Promise.race([stream.failed, monitors.failed]),
    close: () =>
      (closing ??= (async () => {
        shuttingDown = true;
        streamAccepting = false;
        streamThread.drain();
        if (config.shutdownDelayMs > 0) {
          logger.info('draining: not ready, listeners still serving', { shutdown_delay_ms: config.shutdownDelayMs });
          await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
        }
        simulator.abort();
        await simulation;
        await monitorThread.close();
        await Promise.all([closeServer(apiServer, config.shutdownGraceMs), streamThread.close()]);
        if (metricsServer !== undefined) await closeServer(metricsServer, 0);
        await Promise.allSettled([priceLog.close(), stores.close(), rateLimiter.close()]);
        logger.info('stopped');
      })()),
  };
}

/** Resolves once the service has drained after SIGTERM or SIGINT. */
export function runUntilSignal(service: RunningService, logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals | 'a service thread stopped'): void => {
      logger.info('shutting down', { signal });
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      service.close().then(resolve, (error: unknown) => {
        logger.error('shutdown failed', { error });
        process.exitCode = 1;
        resolve();
      });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    void service.failed.then(() => {
      // Half a service is not left running: shut down, and exit non-zero for the supervisor.
      process.exitCode = 1;
      stop('a service thread stopped');
    });
  });
}
