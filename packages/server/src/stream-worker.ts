// The stream thread's entry (see stream-thread.ts): opens the key store and the price log, serves
// the SSE stream on the configured port, on { type: 'drain' } asks every later answer to close its
// connection, and on { type: 'close' } ends every stream cleanly,
// closes both and lets the thread exit. A failure to start throws, which the parent sees as the
// thread's error.
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from './config.ts';
import { rateLimiterFor } from './http/rate-limit.ts';
import { createStreamServer } from './http/stream-server.ts';
import { loadOperatorMiddleware } from './http/operator-middleware.ts';
import { listen } from './listen.ts';
import { registry } from './metrics.ts';
import { createServiceLogger } from './logger.ts';
import { openPriceLog } from './prices/open-price-log.ts';
import { openKeyStore } from './store/open-store.ts';
import type { FromStreamThread, ToStreamThread } from './stream-thread.ts';

const port = parentPort;
if (port === null) throw new Error('stream-worker.ts runs as a worker thread; start it with startStreamThread()');
const config = workerData as Config;
// A worker's process.stderr has no descriptor of its own: write to the process's fd 2.
const logger = createServiceLogger(config.logLevel, { terminal: config.terminalLogs === true, fd: 2, base: { thread: 'stream' } });

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
    port.postMessage({ type: 'closed' } satisfies FromStreamThread);
    port.close();
  })();
});
port.postMessage({ type: 'listening', url } satisfies FromStreamThread);
