// The monitor thread's entry (see monitor-thread.ts): opens the monitor store and the price log,
// starts the delivery, and on close stops it and closes both. A failure to start throws, which the
// parent sees as the thread's error (service-thread.ts).
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from './config.ts';
import { createServiceLogger } from './logger.ts';
import { serveThread } from './service-thread.ts';
import { startTracing } from './tracing.ts';

const port = parentPort;
if (port === null) throw new Error('monitor-worker.ts runs as a worker thread; start it with startMonitorThread()');
const config = workerData as Config;
// A worker's process.stderr has no descriptor of its own: write to the process's fd 2.
const logger = createServiceLogger(config.logLevel, { terminal: config.terminalLogs === true, fd: 2, base: { thread: 'monitors' } });
// This thread's own tracing, started before the modules that load pg and ioredis.
const tracing = await startTracing({ enabled: config.tracing, logger });
const [{ registry }, { openPriceLog }, { openMonitorStore }, { MonitorDelivery }, { WebhookSender }] = await Promise.all([
  import('./metrics.ts'),
  import('./prices/open-price-log.ts'),
  import('./store/open-monitor-store.ts'),
  import('./monitors/monitor-delivery.ts'),
  import('./monitors/webhook-sender.ts'),
]);

const store = await openMonitorStore(config.databaseUrl, logger);
const priceLog = await openPriceLog(config.priceLogUrl, logger).catch(async (error: unknown) => {
  await store.close();
  throw error;
});
const { timeoutMs, endpointConcurrency, allowPrivateEndpoints, retryScheduleMs } = config.monitors;
const sender = new WebhookSender({ timeoutMs, endpointConcurrency, allowPrivateEndpoints });
const delivery = new MonitorDelivery({ store: store.monitors, log: priceLog, sender, logger, retryScheduleMs, timeoutMs });
delivery.start();

serveThread<null>(port, null, {
  registry,
  close: async () => {
    await delivery.stop();
    sender.close();
    await Promise.allSettled([priceLog.close(), store.close()]);
    await tracing.shutdown();
  },
});
