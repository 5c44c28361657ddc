// Starts createApp on port 0 with fake stores and a log capture; tests talk to it with fetch.
import http from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createApp, type AppDeps } from '../../src/app.ts';
import type { Plan } from '../../src/catalog/model.ts';
import { createLogger } from '../../src/logger.ts';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import { FakeCatalogStore, FakeKeyStore } from '../support/fake-catalog-store.ts';

export const PRO_KEY = 'ck_test_pro_key';
export const FREE_KEY = 'ck_test_free_key';

export interface RunningApp {
  base: string;
  store: FakeCatalogStore;
  keys: FakeKeyStore;
  /** Every log line, parsed. */
  logs: Record<string, unknown>[];
  get(path: string, init?: RequestInit & { key?: string | null; plan?: Plan }): Promise<Response>;
  close(): Promise<void>;
}

export async function startApp(options: Partial<Omit<AppDeps, 'logger'>> & { store?: FakeCatalogStore } = {}): Promise<RunningApp> {
  const store = options.store ?? new FakeCatalogStore();
  const keys = (options.keys as FakeKeyStore | undefined) ?? new FakeKeyStore({ [PRO_KEY]: 'pro', [FREE_KEY]: 'free' });
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  // The latest-price store: an in-memory SQLite log unless a test brings its own.
  const priceLog = options.priceLog ?? new SqlitePriceLog(':memory:');
  const deps: AppDeps = { catalog: store, keys, logger, priceLog };
  if (options.rateLimiter !== undefined) deps.rateLimiter = options.rateLimiter;
  if (options.requestTimeoutMs !== undefined) deps.requestTimeoutMs = options.requestTimeoutMs;
  if (options.readiness !== undefined) deps.readiness = options.readiness;
  const server = http.createServer(createApp(deps));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    store,
    keys,
    logs,
    get(path, init = {}) {
      const { key = PRO_KEY, ...rest } = init;
      const headers = new Headers(rest.headers);
      // countGtins takes only the bearer credential (its contract security is BearerAuth).
      const bearerOnly = path.startsWith('/gtin/count');
      if (key !== null && !headers.has('authorization')) headers.set('authorization', bearerOnly && !key.startsWith('Bearer ') ? `Bearer ${key}` : key);
      return fetch(base + path, { ...rest, headers });
    },
    close: async () => {
      await new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      });
      if (options.priceLog === undefined) await (priceLog as SqlitePriceLog).close();
    },
  };
}

/** Sends raw bytes over one connection, for requests fetch refuses to make (bad URLs, GET bodies). */
export function rawRequest(base: string, request: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const connection = connect(Number(port), hostname, () => connection.end(request));
    const chunks: Buffer[] = [];
    connection.on('data', (chunk: Buffer) => chunks.push(chunk));
    connection.on('error', reject);
    connection.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...headerLines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) });
    });
  });
}
