// getProductPrices on distinct products at 50 connections, beside a bare node:http server sending
// one product's answer bytes for any of the same paths (issue 26: ≥ 0.5× bare), on each engine:
// a seeded catalog (`catalog seed`) whose products each have price events in the log.
//
//   node bench/product-prices-bench.ts [--products 2000] [--seconds 8] [--connections 50] [--postgres postgres://postgres@127.0.0.1:5432 | none]
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildPriceEvent } from '@catalog/contract/testing';
import pg from 'pg';
import { silentLogger } from '../src/logger.ts';
import { openPriceLog } from '../src/prices/open-price-log.ts';
import { openCatalogStores } from '../src/store/open-store.ts';
import { load } from './lib/distinct-workloads.ts';
import { progress, runCli, SERVER_DIR, startServer } from './lib/processes.ts';

const { values } = parseArgs({
  options: {
    products: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '8' },
    connections: { type: 'string', default: '50' },
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
  },
});
const CLI = join(SERVER_DIR, 'src/cli/main.ts');
const seconds = Number(values.seconds);
const connections = Number(values.connections);

async function measure(db: string, priceLogUrl: string): Promise<string[]> {
  await runCli(CLI, ['seed', '--db', db, '--products', values.products, '--seed', '26']);
  const stores = await openCatalogStores(db, silentLogger);
  const key = await stores.keys.createKey('pro', 'product prices bench');
  const variants = await stores.catalog.sampleVariants(20_000);
  await stores.close();
  const log = await openPriceLog(priceLogUrl, silentLogger);
  // Each sampled variant priced at both sources in two markets: a typical product answers 10–40 events.
  for (let at = 0; at < variants.length; at += 500) {
    await log.append(variants.slice(at, at + 500).flatMap((variant) =>
      (['marketplacea', 'marketplaceb'] as const).flatMap((source) =>
        ['US', 'UK'].map((market) => buildPriceEvent({ product_id: variant.product_id, variant_id: variant.id, sku: variant.sku, size: variant.size, source, market, price: variant.price || 100 })),
      ),
    ));
  }
  await log.close();
  const productIds = [...new Set(variants.map((variant) => variant.product_id))];
  const paths = productIds.map((id) => `/v2/products/${id}/prices`);
  const server = await startServer(CLI, ['--db', db, '--price-log', priceLogUrl, '--log-level', 'warn']);
  try {
    const auth = { authorization: key };
    const sample = await fetch(server.apiUrl + paths[0]!, { headers: auth });
    const body = Buffer.from(await sample.arrayBuffer());
    progress(`${db.split(':')[0]}: ${productIds.length} products, one answer ${body.length} bytes`);
    const ours = await load(server.apiUrl, paths, auth, seconds, connections);
    const bare = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, 'x-request-id': 'bare' });
      res.end(body);
    });
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const reference = await load(`http://127.0.0.1:${(bare.address() as AddressInfo).port}`, paths, {}, seconds, connections);
    bare.close();
    const engine = db.startsWith('postgres') ? 'PostgreSQL' : 'SQLite';
    return [
      `| getProductPrices, distinct products | ${engine} | ${ours.rps.toFixed(0)} | ${ours.p50} | ${ours.p99} | ${ours.non2xx} |`,
      `| bare node:http, same bytes | ${engine} run | ${reference.rps.toFixed(0)} | ${reference.p50} | ${reference.p99} | ${reference.non2xx} |`,
      `| ratio getProductPrices ÷ bare | ${engine} | ${(ours.rps / reference.rps).toFixed(2)}× | | | |`,
    ];
  } finally {
    await server.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'product-prices-bench-'));
const rows: string[] = [];
try {
  const sqlite = `sqlite:${join(dir, 'catalog.db')}`;
  rows.push(...(await measure(sqlite, sqlite)));
  if (values.postgres !== 'none') {
    const name = `catalog_bench_prices_${process.pid}`;
    const admin = new pg.Client({ connectionString: `${values.postgres}/postgres` });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      rows.push(...(await measure(`${values.postgres}/${name}`, `sqlite:${join(dir, 'prices-pg.db')}`)));
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`| what | engine | req/s | p50 ms | p99 ms | non-2xx |\n| --- | --- | --- | --- | --- | --- |\n${rows.join('\n')}`);
