// Runs the price monitors' delivery (monitors/monitor-delivery.ts: the log reader and the sender)
// in a worker thread of its own (monitor-worker.ts), so its store work (synchronous on SQLite),
// JSON and signatures do not share the API's event loop. The thread opens its own monitor store
// and price log connections; every instance runs one. close() stops reading and claiming and
// waits for the attempts under way (each bounded by the monitors' timeout) before the thread
// closes its stores. The thread's failure settles `failed`, as the stream thread's does.
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { startServiceThread } from './service-thread.ts';

export interface MonitorThread {
  /** Settles with the reason when the thread stops without being asked to. */
  failed: Promise<Error>;
  close(): Promise<void>;
  /** The thread's metrics (the monitors' counters and gauges), as prom-client's JSON. */
  metrics(): Promise<MetricObjectWithValues<MetricValue<string>>[]>;
}

export async function startMonitorThread(config: Config, logger: Logger): Promise<MonitorThread> {
  const thread = await startServiceThread<null>('monitor delivery', new URL('./monitor-worker.ts', import.meta.url), config, logger);
  return { failed: thread.failed, close: () => thread.close(), metrics: () => thread.metrics() };
}
