// /metrics as an operator scrapes it after real traffic: request counts and latencies by operation
// and status from the API thread, open subscribers and delivered events from the stream thread,
// rate-limit refusals, the storefront leaf cache, process metrics; all in one scrape of --metrics-port.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/cli/command-line.ts';
import { silentLogger } from '../src/logger.ts';
import { startService, type RunningService } from '../src/main.ts';
import { SqlitePriceLog } from '../src/prices/sqlite/sqlite-price-log.ts';
import { openCatalogStores, openKeyStore } from '../src/store/open-store.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';
import { openStream } from './http/sse-client.ts';
import { buildPriceEvent, buildPriceEventOnTopic, PRICE_TOPICS } from '@catalog/contract/testing';

let service: RunningService | undefined;
let dir: string | undefined;
afterEach(async () => {
  await service?.close();
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
});

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics on --metrics-port', () => {
  it('counts requests, refusals, subscribers and delivered events from both threads in one scrape', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'metrics-'));
    const file = path.join(dir, 'catalog.db');
    const keys = await openKeyStore(`sqlite:${file}`, silentLogger);
    const proKey = await keys.keys.createKey('pro');
    const listingKey = await keys.keys.createKey('pro');
    const sparseKey = await keys.keys.createKey('pro');
    await keys.close();
    const config = loadConfig(['--db', `sqlite:${file}`, '--host', '127.0.0.1', '--port', '0', '--sse-port', '0', '--metrics-port', '0', '--rate-limit-pro', '3', '--log-level', 'error'], {});
    service = await startService(config, silentLogger);
    expect(service.metricsUrl).toBeDefined();

    for (let i = 0; i < 2; i++) expect((await fetch(`${service.apiUrl}/gtin/count`, { headers: { Authorization: `Bearer ${proKey}` } })).status).toBe(200);
    expect((await fetch(`${service.apiUrl}/gtin/count`)).status).toBe(401);
    const stream = await openStream(`${service.streamUrl}/v1/stream`, { Authorization: `Bearer ${proKey}`, Topics: PRICE_TOPICS[0] });
    expect(stream.status).toBe(200);
    // In memory, each thread counts its own quota: the stream attempt is not among the API's 3.
    expect((await fetch(`${service.apiUrl}/gtin/count`, { headers: { Authorization: `Bearer ${proKey}` } })).status).toBe(200);
    expect((await fetch(`${service.apiUrl}/gtin/count`, { headers: { Authorization: `Bearer ${proKey}` } })).status).toBe(429);
    // The same filter leaf three times: noted, kept, then read from the storefront leaf cache (with
    // a cursor bound, which has no key: a bound alone is counted by the range index, with no leaf).
    for (let i = 0; i < 3; i++) expect((await fetch(`${service.apiUrl}/v3/storefront/products?filters=${encodeURIComponent('price_min >= 10 AND cursor >= 0')}`, { headers: { Authorization: `Bearer ${listingKey}` } })).status).toBe(200);
    // Led by a brand no product has: answered from its (empty) posting list alone.
    expect((await fetch(`${service.apiUrl}/v3/storefront/products?filters=${encodeURIComponent('brand = "Nobody" AND price_min >= 10')}`, { headers: { Authorization: `Bearer ${sparseKey}` } })).status).toBe(200);
    const log = new SqlitePriceLog(file);
    await log.append([buildPriceEventOnTopic(PRICE_TOPICS[0]), buildPriceEventOnTopic(PRICE_TOPICS[0])]);
    await log.close();
    await stream.frames(3);

    const response = await fetch(`${service.metricsUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await response.text();
    expect(value(text, 'catalog_http_requests_total{operation="countGtins",status="200"}')).toBe(3);
    expect(value(text, 'catalog_http_requests_total{operation="countGtins",status="429"}')).toBe(1);
    expect(value(text, 'catalog_http_requests_total{operation="countGtins",status="401"}')).toBe(1);
    expect(value(text, 'catalog_http_requests_total{operation="streamPrices",status="200"}')).toBe(1);
    expect(value(text, 'catalog_http_request_duration_seconds_count{operation="countGtins"}')).toBe(5);
    expect(value(text, 'catalog_rate_limit_refusals_total{limit="key"}')).toBe(1);
    expect(value(text, 'catalog_stream_subscribers')).toBe(1);
    expect(value(text, 'catalog_stream_events_delivered_total')).toBe(2);
    expect(value(text, 'catalog_price_log_lag_seconds')).toBeDefined();
    expect(value(text, 'catalog_storefront_leaf_cache_lookups{result="hit"}')).toBe(1);
    expect(value(text, 'catalog_storefront_leaf_cache_lookups{result="miss"}')).toBe(2);
    expect(value(text, 'catalog_storefront_sparse_answers')).toBe(1);
    // One range leaf: no pair's table.
    expect(value(text, 'catalog_storefront_pair_counts{event="counted"}')).toBe(0);
    expect(value(text, 'catalog_storefront_pair_counts{event="built"}')).toBe(0);
    expect(value(text, 'catalog_storefront_pair_counts{event="scanned"}')).toBe(0);
    // The leaf's keep on its second use, made between requests: no keep had been timed yet.
    expect(value(text, 'catalog_storefront_later_keeps{result="made"}')).toBe(1);
    expect(text).toContain('catalog_process_resident_memory_bytes');
    expect(text).toContain('catalog_stream_slow_consumers_cut_total');
    stream.close();
  });

  it("counts price monitor deliveries by result, and reads the backlog and disabled monitors, from serve's delivery", async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'metrics-monitors-'));
    const file = path.join(dir, 'catalog.db');
    const [healthy, gone] = [await startWebhookReceiver([{ status: 204 }]), await startWebhookReceiver([{ status: 410 }])];
    const stores = await openCatalogStores(`sqlite:${file}`, silentLogger);
    const proKey = await stores.keys.createKey('pro');
    for (const [receiver, product] of [[healthy, 'p-healthy'], [gone, 'p-gone']] as const) {
      await stores.monitors.addMonitor(proKey, { url: receiver.url, filter: `product_id = "${product}"`, minChangePercent: 0, minIntervalMs: 0 }, 0);
    }
    await stores.close();
    const config = loadConfig(['--db', `sqlite:${file}`, '--port', '0', '--sse-port', '0', '--metrics-port', '0', '--log-level', 'error', '--monitor-private-endpoints', 'allow'], {});
    service = await startService(config, silentLogger);
    const log = new SqlitePriceLog(file);
    await log.append([buildPriceEvent({ product_id: 'p-healthy' }), buildPriceEvent({ product_id: 'p-gone' })]);
    await log.close();
    await Promise.all([healthy.waitFor(1), gone.waitFor(1)]);
    let text = '';
    for (const deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
      text = await (await fetch(`${service.metricsUrl}/metrics`)).text();
      if (value(text, 'catalog_monitors_disabled') === 1 && value(text, 'catalog_monitor_deliveries_total{result="delivered"}') === 1) break;
    }
    expect(value(text, 'catalog_monitor_deliveries_total{result="delivered"}')).toBe(1);
    expect(value(text, 'catalog_monitor_deliveries_total{result="gone"}')).toBe(1);
    expect(value(text, 'catalog_monitors_disabled')).toBe(1);
    expect(value(text, 'catalog_monitor_backlog')).toBe(0);
    expect(value(text, 'catalog_monitor_oldest_due_age_seconds')).toBe(0);
    await Promise.all([healthy.close(), gone.close()]);
  });
});

describe('request metrics', () => {
  it('report durations exactly as a prom-client Histogram with the same buckets would, and answers by status', async () => {
    const { Histogram, Registry } = await import('prom-client');
    const { observeRequest, registry } = await import('../src/metrics.ts');
    const referenceRegistry = new Registry();
    const reference = new Histogram({
      name: 'catalog_http_request_duration_seconds',
      help: 'reference',
      labelNames: ['operation'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [referenceRegistry],
    });
    const seconds = [0, 0.0005, 0.0007, 0.001, 0.003, 0.04, 0.5, 2.5, 9.99, 10, 12, 0.0249];
    for (const [at, duration] of seconds.entries()) {
      observeRequest('parityTest', at % 3 === 0 ? 404 : 200, duration);
      reference.labels('parityTest').observe(duration);
    }
    const lines = (text: string): string[] => text.split('\n').filter((line) => line.includes('operation="parityTest"'));
    const ours = lines(await registry.getSingleMetricAsString('catalog_http_request_duration_seconds'));
    expect(ours).toHaveLength(16);
    expect(ours).toEqual(lines(await referenceRegistry.metrics()));
    const scraped = await registry.metrics();
    expect(value(scraped, 'catalog_http_requests_total{operation="parityTest",status="200"}')).toBe(8);
    expect(value(scraped, 'catalog_http_requests_total{operation="parityTest",status="404"}')).toBe(4);
    // Counted once: a later scrape reports the same totals.
    expect(value(await registry.metrics(), 'catalog_http_requests_total{operation="parityTest",status="404"}')).toBe(4);
  });
});
