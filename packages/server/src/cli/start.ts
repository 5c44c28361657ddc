// `pnpm start`: the newcomer's one command. Seeds a demo catalog when the database does not exist
// yet, creates a free and a Pro demo key once (kept in data/demo-keys.json next to the database,
// since keys are stored only as digests), runs the price simulator, and prints what to try.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createServiceLogger } from '../logger.ts';
import { loadConfig } from './command-line.ts';
import { sqlitePath } from '../storage-url.ts';
import { startTracing } from '../tracing.ts';

interface DemoKeys {
  free: string;
  pro: string;
}

const DEMO_PRODUCTS = '2000';
const DEMO_PRICE_RATE = '5';


export async function run(args: string[]): Promise<number> {
  const withDefaults = args.includes('--simulate-prices') ? args : [...args, '--simulate-prices', DEMO_PRICE_RATE];
  const config = loadConfig(withDefaults, process.env, 'start');
  const logger = createServiceLogger(config.logLevel);
  // Before the stores and main.ts load pg, ioredis and express: the instrumentations patch them as they load.
  const tracing = await startTracing({ enabled: config.tracing, logger });
  const [{ runUntilSignal, startService }, { openCatalogStores }, { run: seed }] = await Promise.all([import('../main.ts'), import('../store/open-store.ts'), import('./seed.ts')]);
  const dbFile = config.databaseUrl.startsWith('sqlite:') ? sqlitePath(config.databaseUrl) : null;
  const dataDir = dbFile ? dirname(dbFile) : resolve('data');
  mkdirSync(dataDir, { recursive: true });

  if (dbFile && !existsSync(dbFile)) {
    process.stderr.write(`No catalog at ${dbFile}: seeding a demo catalog of ${DEMO_PRODUCTS} products…\n`);
    const code = await seed(['--db', config.databaseUrl, '--products', DEMO_PRODUCTS]);
    if (code) return code;
  }

  const keysFile = join(dataDir, 'demo-keys.json');
  let keys: DemoKeys;
  if (existsSync(keysFile)) {
    keys = JSON.parse(readFileSync(keysFile, 'utf8')) as DemoKeys;
  } else {
    const stores = await openCatalogStores(config.databaseUrl, logger);
    try {
      keys = { free: await stores.keys.createKey('free', 'demo'), pro: await stores.keys.createKey('pro', 'demo') };
    } finally {
      await stores.close();
    }
    writeFileSync(keysFile, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  }

  const service = await startService(config, logger);
  const api = service.apiUrl;
  process.stdout.write(
    [
      '',
      'Catalog and Price Feed is running.',
      `  API:     ${api}   (docs: ${api}/docs, spec: ${api}/openapi.json)`,
      `  Stream:  ${service.streamUrl}/v1/stream`,
      `  Keys:    pro  ${keys.pro}`,
      `           free ${keys.free}      (stored in ${keysFile})`,
      '',
      'Try:',
      `  curl -s '${api}/v3/storefront/products?limit=2' -H 'Authorization: ${keys.free}'`,
      `  curl -s '${api}/v2/brands' -H 'Authorization: ${keys.pro}'`,
      `  curl -s '${api}/gtin/count' -H 'Authorization: Bearer ${keys.free}'`,
      `  curl -N '${service.streamUrl}/v1/stream' -H 'Authorization: Bearer ${keys.pro}' -H 'Topics: price:marketplacea:us, price:marketplaceb:uk'`,
      '',
      'Ctrl-C stops it.',
      '',
    ].join('\n'),
  );
  await runUntilSignal(service, logger);
  await tracing.shutdown();
  return 0;
}
