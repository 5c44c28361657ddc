// Prometheus metrics with prom-client, one registry per thread (each thread loads this module
// once). The API thread's /metrics (on --metrics-port) merges its registry with the stream
// thread's (stream-thread.ts asks it), so one scrape covers the process.
//
// Cost on the hot paths: an answered request is a few additions to this module's own counts per
// operation (RequestSeries), turned into prom-client's output only when scraped; a delivered event
// is one integer increment, likewise. prom-client's own counter and histogram validate and hash
// their labels on every increment, about a microsecond per request. Label values are bounded: operations of
// the contract, a few operational routes, `other`.
import { collectDefaultMetrics, Counter, Gauge, Registry, type Metric } from 'prom-client';

export const registry = new Registry();

/** Answers of one operation since the thread started (durations) or since the last scrape (statuses). */
interface RequestSeries {
  /** Observations per bucket of DURATION_BUCKETS, the last one past every bound (`+Inf`); not cumulative. */
  buckets: Float64Array;
  sum: number;
  count: number;
  /** Answers by status since the counter last took them. */
  statuses: Map<number, number>;
}
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] as const;
const requestSeries = new Map<string, RequestSeries>();

new Counter({
  name: 'catalog_http_requests_total',
  help: 'Answered HTTP requests by operation and status (both listeners).',
  labelNames: ['operation', 'status'] as const,
  registers: [registry],
  collect() {
    for (const [operation, series] of requestSeries) {
      for (const [status, count] of series.statuses) this.inc({ operation, status: String(status) }, count);
      series.statuses.clear();
    }
  },
});

/**
 * `catalog_http_request_duration_seconds` exactly as a prom-client Histogram with these buckets and
 * the label `operation` reports it (the same values, names and labels, summed across threads), from
 * RequestSeries.
 */
const durations = {
  name: 'catalog_http_request_duration_seconds',
  help: 'Time from the first byte of a request to its answer, by operation.',
  type: 'histogram',
  aggregator: 'sum',
  // What prom-client's registries read of a metric (its typings name `type` by an enum; at run time it is this string).
  get(): { name: string; help: string; type: string; aggregator: string; values: { value: number; metricName: string; labels: Record<string, string | number> }[] } {
    const values: { value: number; metricName: string; labels: Record<string, string | number> }[] = [];
    for (const [operation, series] of requestSeries) {
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, at) => {
        cumulative += series.buckets[at]!;
        values.push({ value: cumulative, metricName: `${this.name}_bucket`, labels: { le, operation } });
      });
      values.push({ value: series.count, metricName: `${this.name}_bucket`, labels: { le: '+Inf', operation } });
      values.push({ value: series.sum, metricName: `${this.name}_sum`, labels: { operation } });
      values.push({ value: series.count, metricName: `${this.name}_count`, labels: { operation } });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  },
  reset(): void {
    for (const series of requestSeries.values()) {
      series.buckets.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  },
};
registry.registerMetric(durations as unknown as Metric);
const refusals = new Counter({
  name: 'catalog_rate_limit_refusals_total',
  help: 'Requests refused with 429, by limit: key quota, failed authentication per address, streams per key.',
  labelNames: ['limit'] as const,
  registers: [registry],
});
/** Rate-limit counts taken in memory because the shared store (Redis) failed or did not answer. */
export const rateLimitStoreFallbacks = new Counter({
  name: 'catalog_rate_limit_store_failures_total',
  help: 'Rate-limit counts the shared store (Redis) failed or did not answer in time (counted in memory instead).',
  registers: [registry],
});
const subscribers = new Gauge({
  name: 'catalog_stream_subscribers',
  help: 'Open price streams.',
  registers: [registry],
});
let deliveredSinceScrape = 0;
new Counter({
  name: 'catalog_stream_events_delivered_total',
  help: 'Price events and resets written to subscribers (one per event per subscriber).',
  registers: [registry],
  collect() {
    this.inc(deliveredSinceScrape);
    deliveredSinceScrape = 0;
  },
});
const slowCut = new Counter({
  name: 'catalog_stream_slow_consumers_cut_total',
  help: 'Subscribers disconnected because the server held more than the limit for them.',
  registers: [registry],
});
let newestRead: { data: string; readAt: number } | null = null;
new Gauge({
  name: 'catalog_price_log_lag_seconds',
  help: 'Age of the newest price event when the stream read it from the price log: from its timestamp to the read.',
  registers: [registry],
  collect() {
    if (newestRead === null) return;
    const timestamp = Date.parse((JSON.parse(newestRead.data) as { timestamp?: string }).timestamp ?? '');
    if (Number.isFinite(timestamp)) this.set((newestRead.readAt - timestamp) / 1000);
  },
});

let defaultsCollected = false;
/** Node's process metrics (memory, event loop lag, GC), once per process. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: registry, prefix: 'catalog_' });
}

export function observeRequest(operation: string, status: number, seconds: number): void {
  let series = requestSeries.get(operation);
  if (series === undefined) {
    series = { buckets: new Float64Array(DURATION_BUCKETS.length + 1), sum: 0, count: 0, statuses: new Map() };
    requestSeries.set(operation, series);
  }
  let bucket = 0;
  while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket += 1;
  series.buckets[bucket]! += 1;
  series.sum += seconds;
  series.count += 1;
  series.statuses.set(status, (series.statuses.get(status) ?? 0) + 1);
}

export function refused(limit: 'key' | 'address' | 'streams'): void {
  refusals.labels(limit).inc();
}

export const streamMetrics = {
  opened: (): void => subscribers.inc(),
  closed: (): void => subscribers.dec(),
  delivered: (count = 1): void => {
    deliveredSinceScrape += count;
  },
  slowConsumerCut: (): void => slowCut.inc(),
  /** The newest event read from the price log (its lag is computed when scraped). */
  read: (data: string): void => {
    newestRead = { data, readAt: Date.now() };
  },
};

/** A gauge whose value is read when scraped, e.g. a connection pool's counts. */
export function gaugeReading(name: string, help: string, labelNames: readonly string[], read: () => Record<string, number>): void {
  if (registry.getSingleMetric(name) !== undefined) registry.removeSingleMetric(name);
  const [label] = labelNames;
  new Gauge({
    name,
    help,
    labelNames: label === undefined ? [] : [label],
    registers: [registry],
    collect() {
      for (const [value, reading] of Object.entries(read())) {
        if (label === undefined) this.set(reading);
        else this.labels(value).set(reading);
      }
    },
  });
}

const monitorDeliveries = new Counter({
  name: 'catalog_monitor_deliveries_total',
  help: 'Price monitor delivery attempts by result: delivered (2xx), failed (to be retried), gone (410: monitor disabled), exhausted (retry schedule spent: monitor disabled).',
  labelNames: ['result'] as const,
  registers: [registry],
});

/** The store's delivery totals (MonitorStore.deliveryTotals). */
interface MonitorTotals {
  backlog: number;
  oldestDueAt: number | null;
  disabledMonitors: number;
}
/** Where the monitors' gauges read the totals when scraped; null: no delivery runs in this thread. */
let monitorTotals: (() => Promise<MonitorTotals>) | null = null;
/** One store read per scrape serves the three gauges. */
let monitorTotalsRead: Promise<MonitorTotals | null> | null = null;
function readMonitorTotals(): Promise<MonitorTotals | null> {
  monitorTotalsRead ??= (monitorTotals?.() ?? Promise.resolve(null))
    .catch(() => null)
    .finally(() => setTimeout(() => (monitorTotalsRead = null), 0));
  return monitorTotalsRead;
}
const MONITOR_GAUGES: readonly [string, string, (totals: MonitorTotals) => number][] = [
  ['catalog_monitor_backlog', 'Price changes waiting to be delivered by enabled monitors.', (totals) => totals.backlog],
  ['catalog_monitor_oldest_due_age_seconds', 'Age of the oldest price change waiting to be delivered (0 with none).', (totals) => (totals.oldestDueAt === null ? 0 : (Date.now() - totals.oldestDueAt) / 1000)],
  ['catalog_monitors_disabled', 'Monitors disabled (by a 410, by failures past the retry schedule, or by the operator).', (totals) => totals.disabledMonitors],
];
for (const [name, help, value] of MONITOR_GAUGES) {
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      const totals = await readMonitorTotals();
      if (totals !== null) this.set(value(totals));
    },
  });
}

export const monitorMetrics = {
  attempt: (result: 'delivered' | 'failed' | 'gone' | 'exhausted'): void => monitorDeliveries.labels(result).inc(),
  /** Where the gauges read the store's totals from. */
  totals: (read: (() => Promise<MonitorTotals>) | null): void => {
    monitorTotals = read;
  },
};
