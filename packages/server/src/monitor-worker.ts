// A monitor thread's entry (see monitor-thread.ts), as the reader of the price log
// (monitors/monitor-reader.ts: the monitor store and the price log) or the sender
// (monitors/monitor-sender.ts: the monitor store and the webhook sender); on close it stops its
// part and closes what it opened. A failure to start throws, which the parent sees as the thread's
// error (service-thread.ts).
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from './config.ts';
import { createServiceLogger } from './logger.ts';
import type { MonitorRole } from './monitor-thread.ts';
import { serveThread } from './service-thread.ts';
import { startTracing } from './tracing.ts';

const port = parentPort;
if (port === null) throw new Error('monitor-worker.ts runs as a worker thread; start it with startMonitorThread()');
const { config, role, link: linkBuffer } = workerData as { config: Config; role: MonitorRole; link: SharedArrayBuffer };
// A worker's process.stderr has no descriptor of its own: write to the process's fd 2.
const logger = createServiceLogger(config.logLevel, { terminal: config.terminalLogs === true, fd: 2, base: { thread: `monitor ${role}` } });
// This thread's own tracing, started before the modules that load pg and ioredis.
const tracing = await startTracing({ enabled: config.tracing, logger });
const [{ registry }, { openMonitorStore }, { DeliveryLink, takingTurns }] = await Promise.all([
  import('./metrics.ts'),
  import('./store/open-monitor-store.ts'),
  import('./monitors/delivery-loop.ts'),
]);
const link = new DeliveryLink(linkBuffer);
const store = await openMonitorStore(config.databaseUrl, logger);
// SQLite: the reader's and the sender's writes take turns here rather than at the database's lock.
const monitors = store.oneWriter ? takingTurns(store.monitors, link) : store.monitors;

async function startReader(): Promise<() => Promise<void>> {
  const [{ openPriceLog }, { MonitorReader }] = await Promise.all([import('./prices/open-price-log.ts'), import('./monitors/monitor-reader.ts')]);
  const priceLog = await openPriceLog(config.priceLogUrl, logger);
  const reader = new MonitorReader({ store: monitors, log: priceLog, link, logger });
  reader.start();
  return async () => {
    await reader.stop();
    await priceLog.close();
  };
}

async function startSender(): Promise<() => Promise<void>> {
  const [{ MonitorSender }, { WebhookSender }] = await Promise.all([import('./monitors/monitor-sender.ts'), import('./monitors/webhook-sender.ts')]);
  const { timeoutMs, endpointConcurrency, allowPrivateEndpoints, retryScheduleMs } = config.monitors;
  const webhooks = new WebhookSender({ timeoutMs, endpointConcurrency, allowPrivateEndpoints });
  const sender = new MonitorSender({ store: monitors, sender: webhooks, link, logger, retryScheduleMs, timeoutMs });
  sender.start();
  return async () => {
    await sender.stop();
    webhooks.close();
  };
}

const stop = await (role === 'reader' ? startReader() : startSender()).catch(async (error: unknown) => {
  await store.close();
  throw error;
});

serveThread<null>(port, null, {
  registry,
  close: async () => {
    await stop().catch((error: unknown) => logger.error(`monitor ${role} did not stop cleanly`, { error }));
    await store.close();
    await tracing.shutdown();
  },
});
