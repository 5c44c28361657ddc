// Runs the price monitors' delivery in two worker threads of their own (monitor-worker.ts), so
// their store work (synchronous on SQLite), JSON and signatures neither share the API's event loop
// nor each other's: the reader of the price log (monitors/monitor-reader.ts) and the sender
// (monitors/monitor-sender.ts), linked by memory they share (DeliveryLink). Each opens its own
// monitor store connection (the reader also the price log); every instance runs one pair.
// close() stops both: the reader's round under way ends, and the sender waits for the attempts
// under way (each bounded by the monitors' timeout) before the threads close their stores. Either
// thread's failure settles `failed`, as the stream thread's does.
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { DeliveryLink } from './monitors/delivery-loop.ts';
import { startServiceThread, type ServiceThread } from './service-thread.ts';

export type MonitorRole = 'reader' | 'sender';

export interface MonitorThread {
  /** Settles with the reason when either thread stops without being asked to. */
  failed: Promise<Error>;
  close(): Promise<void>;
  /** The threads' metrics (the monitors' counters and gauges), as prom-client's JSON. */
  metrics(): Promise<MetricObjectWithValues<MetricValue<string>>[]>;
}

export async function startMonitorThread(config: Config, logger: Logger): Promise<MonitorThread> {
  const link = new DeliveryLink();
  const start = (role: MonitorRole): Promise<ServiceThread<null, never>> =>
    startServiceThread<null>(`monitor ${role}`, new URL('./monitor-worker.ts', import.meta.url), { config, role, link: link.buffer }, logger);
  const started = await Promise.allSettled([start('reader'), start('sender')]);
  const threads = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const refused = started.find((result) => result.status === 'rejected');
  if (refused !== undefined) {
    await Promise.all(threads.map((thread) => thread.close()));
    throw refused.reason;
  }
  return {
    failed: Promise.race(threads.map((thread) => thread.failed)),
    close: async () => {
      await Promise.all(threads.map((thread) => thread.close()));
    },
    metrics: async () => AggregatorRegistry.aggregate(await Promise.all(threads.map((thread) => thread.metrics()))).getMetricsAsJSON(),
  };
}
