// Starts createApp on port 0 with fake stores and a log capture; tests talk to it with fetch.
import http from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { operations } from '@catalog/contract';
import { createApp } from '../../src/app.ts';
import type { Plan } from '../../src/catalog/model.ts';
import type { AppDeps } from '../../src/dependencies.ts';
import { operationsOf } from '../../src/http/operation-routes.ts';
import { createLogger } from '../../src/logger.ts';
import { testAppDeps } from '../support/app-deps.ts';
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

/** Each API operation's path template as a pattern: literal segments in any case, one trailing slash. */
const patterns = operationsOf('api').map((id) => ({ id, pattern: new RegExp(`^${operations[id].path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`, 'i') }));
/** The contract's credential scheme of the operation at this path; none for a path that names none. */
function credentialOf(method: string, pathname: string): string | undefined {
  const found = patterns.find(({ id, pattern }) => operations[id].method === method && pattern.test(pathname));
  return found === undefined ? undefined : operations[found.id].credential;
}

/** Every dependency is testAppDeps' unless given; `store` and `keys` are fakes the test can reach. */
export async function startApp(
  options: Partial<Omit<AppDeps, 'logger' | 'catalog' | 'keys'>> & { store?: FakeCatalogStore; keys?: FakeKeyStore } = {},
): Promise<RunningApp> {
  const { store = new FakeCatalogStore(), keys = new FakeKeyStore({ [PRO_KEY]: 'pro', [FREE_KEY]: 'free' }), ...rest } = options;
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  const server = http.createServer(createApp(testAppDeps({ ...rest, catalog: store, keys, logger })));
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
      // An operation whose contract security is BearerAuth takes only the bearer credential.
      const bearerOnly = credentialOf(rest.method ?? 'GET', new URL(path, base).pathname) === 'bearer';
      if (key !== null && !headers.has('authorization')) headers.set('authorization', bearerOnly && !key.startsWith('Bearer ') ? `Bearer ${key}` : key);
      return fetch(base + path, { ...rest, headers });
    },
    close: async () => {
      await new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      });
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
