// The stream thread's entry (see stream-thread.ts): opens the key store and the price log, serves
// the SSE stream on the configured port, on { type: 'drain' } asks every later answer to close its
// connection, and on { type: 'close' } ends every stream cleanly,
// closes both and lets the thread exit. A failure to start throws, which the parent sees as the
// thread's error.
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from './config.ts';
import { createServiceLogger } from './logger.ts';
import type { FromStreamThread, ToStreamThread } from './stream-thread.ts';
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

port.on('message', (message: ToStreamThread) => {
  if (message.type === 'metrics') {
    void registry.getMetricsAsJSON().then((metrics) => port.postMessage({ type: 'metrics', id: message.id, metrics } satisfies FromStreamThread));
    return;
  }
  if (message.type === 'drain') {
    stream.drain();
    return;
  }
  void (async () => {
    await stream.close();
    await Promise.allSettled([priceLog.close(), keyStore.close(), rateLimiter.close()]);
    await tracing.shutdown();
    port.postMessage({ type: 'closed' } satisfies FromStreamThread);
    port.close();
  })();
});
port.postMessage({ type: 'listening', url } satisfies FromStreamThread);
