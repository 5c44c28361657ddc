// The stream thread's entry (see stream-thread.ts): opens the key store and the price log, serves
// the SSE stream on the configured port, on { type: 'drain' } asks every later answer to close its
// connection, and on close ends every stream cleanly, closes both and lets the thread exit. A
// failure to start throws, which the parent sees as the thread's error (service-thread.ts).
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from './config.ts';
import { createServiceLogger } from './logger.ts';
import { serveThread } from './service-thread.ts';
import type { StreamThreadReady, ToStreamThread } from './stream-thread.ts';
import { startTracing } from './tracing.ts';

const port = parentPort;
if (port === null) throw new Error('stream-worker.ts runs as a worker thread; start it with startStreamThread()');
const config = workerData as Config;
// A worker's process.stderr has no descriptor of its own: write to the process's fd 2.
const logger = createServiceLogger(config.logLevel, { terminal: config.terminalLogs === true, fd: 2, base: { thread: 'stream' } });
// This thread's own tracing, started before the modules that load express, pg and ioredis.
const tracing = await startTracing({ enabled: config.tracing, logger });
const [{ rateLimiterFor }, { createStreamServer }, { loadOperatorMiddleware }, { listen }, { registry }, { openPriceLog }, { openKeyStore }] = await Promise.all([
  import('./http/rate-limit.ts'),
  import('./http/stream-server.ts'),
  import('./http/operator-middleware.ts'),
  import('./listen.ts'),
  import('./metrics.ts'),
  import('./prices/open-price-log.ts'),
  import('./store/open-store.ts'),
]);

const keyStore = await openKeyStore(config.databaseUrl, logger);
const priceLog = await openPriceLog(config.priceLogUrl, logger).catch(async (error: unknown) => {
  await keyStore.close();
  throw error;
});
const rateLimiter = rateLimiterFor(config, logger);
await rateLimiter.connected();
const middleware = await loadOperatorMiddleware(config.middleware, 'stream').catch(async (error: unknown) => {
  await Promise.allSettled([priceLog.close(), keyStore.close(), rateLimiter.close()]);
  throw error;
});
const stream = createStreamServer({
  middleware,
  rateLimiter,
  maxStreamsPerKey: config.maxStreamsPerKey,
  priceLog,
  keys: keyStore.keys,
  logger,
  heartbeatMs: config.heartbeatMs,
  maxBufferBytes: config.maxSubscriberBufferBytes,
  limits: { maxConnections: config.maxStreamConnections, headersTimeoutMs: config.headersTimeoutMs },
});
const url = await listen(stream.server, config.ssePort, config.host).catch(async (error: unknown) => {
  await Promise.allSettled([stream.close(), priceLog.close(), keyStore.close(), rateLimiter.close()]);
  throw error;
});

serveThread<StreamThreadReady, ToStreamThread>(port, { url }, {
  registry,
  onMessage: () => stream.drain(),
  close: async () => {
    await stream.close();
    await Promise.allSettled([priceLog.close(), keyStore.close(), rateLimiter.close()]);
    await tracing.shutdown();
  },
});
