// Measures the routing design for getProduct: a bare node:http server returning the same bytes,
// createApp (Express routes from the operation table + precompiled openapi-backend validators) on
// a server made with serverOptionsFor, the same app on a plain http.createServer
// (`app-default-server`: Express's per-request prototype change), the same work done through
// openapi-backend's handleRequest, and optionally another revision's `app` (`baseline`, from a
// worktree given with --baseline). Each server runs in its own process; rounds alternate so a noisy
// machine affects all alike. Reports, never asserts; CPU per request is the steadiest figure.
//   node bench/get-product-routing.ts [--seconds 8] [--rounds 2] [--connections 50] [--modes bare,app] [--baseline <worktree>]
import { fork } from 'node:child_process';
import http from 'node:http';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createContractAjv } from '@catalog/contract/ajv';
import { OpenAPIBackend, type Context } from 'openapi-backend';
import { createApp } from '../src/app.ts';
import { serverOptionsFor } from '../src/http/express-shell.ts';
import { testAppDeps } from '../test/support/app-deps.ts';
import { CatalogService } from '../src/catalog/catalog-service.ts';
import { openapiDocument } from '@catalog/contract/documents';
import { authorize, createAuthenticator } from '../src/http/auth.ts';
import { sendError, sendJson } from '../src/http/exchange.ts';
import { HttpRefusal } from '../src/http/errors.ts';
import { createRateLimiter, NO_RATE_LIMITS } from '../src/http/rate-limit.ts';
import { createLogger, createServiceLogger, silentLogger } from '../src/logger.ts';
import { FakeCatalogStore, FakeKeyStore } from '../test/support/fake-catalog-store.ts';
import { buildCatalogProduct } from '@catalog/contract/testing';

// `app-silent` (createApp, log lines dropped) and `app-unbuffered` (one write(2) per log line)
// locate the cost; the default run compares the three designs.
const MODES = ['bare', 'app', 'app-default-server', 'openapi-backend', 'app-silent', 'app-unbuffered', 'baseline'] as const;
type Mode = (typeof MODES)[number];
const KEY = 'ck_bench_pro';
const SLUG = 'nike-dunk-low-retro-white-black-panda';

const { values } = parseArgs({
  options: {
    serve: { type: 'string' },
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    modes: { type: 'string', default: 'bare,app,openapi-backend' },
    baseline: { type: 'string' },
  },
});

function fixtures(): { store: FakeCatalogStore; keys: FakeKeyStore } {
  const product = buildCatalogProduct({ id: '3f0e9a8c-6f0b-4c55-9d8e-2a1b7c4d5e6f', slug: SLUG });
  return { store: new FakeCatalogStore({ catalog: [product] }), keys: new FakeKeyStore({ [KEY]: 'pro' }) };
}

function serverFor(mode: Mode): http.Server {
  const { store, keys } = fixtures();
  // The service's logger, as `catalog serve` makes it (JSON lines on stderr).
  const logger = createServiceLogger('info', { terminal: false });
  switch (mode) {
    case 'bare': {
      const product = store.catalog[0];
      const payload = JSON.stringify({ status: 'success', error: '', message: '', query: {}, data: product, meta: null });
      return http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(payload), 'x-request-id': 'bench' });
        res.end(payload);
      });
    }
    case 'app': {
      const app = createApp(testAppDeps({ catalog: store, keys, logger }));
      return http.createServer(serverOptionsFor(app), app);
    }
    case 'app-default-server':
      return http.createServer(createApp(testAppDeps({ catalog: store, keys, logger })));
    case 'app-unbuffered': {
      const app = createApp(testAppDeps({ catalog: store, keys, logger: createLogger() }));
      return http.createServer(serverOptionsFor(app), app);
    }
    case 'app-silent': {
      const app = createApp(testAppDeps({ catalog: store, keys, logger: silentLogger }));
      return http.createServer(serverOptionsFor(app), app);
    }
    case 'baseline':
      throw new Error('the baseline runs from its own worktree');
    case 'openapi-backend': {
      const catalog = new CatalogService(store);
      const authenticator = createAuthenticator(keys, createRateLimiter(NO_RATE_LIMITS));
      const api = new OpenAPIBackend({
        definition: structuredClone(openapiDocument) as never,
        quick: true,
        coerceTypes: true,
        customizeAjv: (_a, options) => createContractAjv({ ...options, strict: false, useDefaults: true }) as never,
        handlers: {
          getProduct: async (c: Context, req: http.IncomingMessage, res: http.ServerResponse) => {
            try {
              const caller = await authenticator.authenticate(req.headers.authorization, 'apiKey', '127.0.0.1');
              authorize('getProduct', caller.plan);
              const data = await catalog.getProduct(String(c.request.params['id']), caller.plan);
              sendJson(logger, req, res, 200, { status: 'success', error: '', message: '', query: {}, data, meta: null });
            } catch (error) {
              sendError(logger, req, res, error);
            }
          },
          validationFail: (_c: Context, req: http.IncomingMessage, res: http.ServerResponse) =>
            sendError(logger, req, res, new HttpRefusal('invalid_request', 'invalid')),
          notFound: (_c: Context, req: http.IncomingMessage, res: http.ServerResponse) =>
            sendError(logger, req, res, new HttpRefusal('not_found', 'not found')),
        },
      });
      api.init().catch(() => {});
      return http.createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://bench.invalid');
        void api.handleRequest({ method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers as Record<string, string> }, req, res);
      });
    }
  }
}

async function serve(mode: Mode): Promise<void> {
  const server = serverFor(mode);
  process.once('SIGINT', () => server.close(() => process.exit(0)));
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    if (process.send === undefined) console.log(`listening on ${port}`);
    else process.send({ port });
  });
  // CPU time is the robust measure on a shared machine: the parent asks before and after a run.
  process.on('message', () => {
    const usage = process.cpuUsage();
    process.send?.({ cpuMicros: usage.user + usage.system });
  });
}

interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  /** Server CPU microseconds per request. */
  cpu: number;
}

async function measure(mode: Mode, seconds: number, connections: number): Promise<Measurement> {
  // The baseline is the other revision's own `app`, served by its copy of this script.
  const script = mode === 'baseline' ? `${values.baseline ?? ''}/packages/server/bench/get-product-routing.ts` : new URL(import.meta.url).pathname;
  if (mode === 'baseline' && values.baseline === undefined) throw new Error('mode baseline needs --baseline <worktree of another revision>');
  const child = fork(script, ['--serve', mode === 'baseline' ? 'app' : mode], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  const url = `http://127.0.0.1:${port}/v2/products/${SLUG}`;
  const headers = { authorization: KEY };
  const cpuNow = (): Promise<number> =>
    new Promise((resolve) => {
      child.once('message', (m: { cpuMicros: number }) => resolve(m.cpuMicros));
      child.send('cpu');
    });
  await autocannon({ url, headers, connections, duration: 2 }); // warm-up
  const before = await cpuNow();
  const result = await autocannon({ url, headers, connections, duration: seconds });
  const after = await cpuNow();
  child.kill();
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${mode}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpu: (after - before) / result.requests.total };
}

if (values.serve !== undefined) {
  await serve(values.serve as Mode);
} else {
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  const totals = new Map<Mode, { rps: number[]; p50: number[]; p99: number[]; cpu: number[] }>();
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const mode of (values.modes ?? '').split(',') as Mode[]) {
      if (!MODES.includes(mode)) throw new Error(`unknown mode ${mode}; one of ${MODES.join(', ')}`);
      const r = await measure(mode, seconds, connections);
      process.stderr.write(`round ${round} ${mode}: ${Math.round(r.rps)} req/s p50 ${r.p50} ms p99 ${r.p99} ms, ${r.cpu.toFixed(1)} µs CPU/request\n`);
      const t = totals.get(mode) ?? { rps: [], p50: [], p99: [], cpu: [] };
      t.cpu.push(r.cpu);
      t.rps.push(r.rps);
      t.p50.push(r.p50);
      t.p99.push(r.p99);
      totals.set(mode, t);
    }
  }
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const bare = mean(totals.get('bare')?.rps ?? [1]);
  const bareCpu = mean(totals.get('bare')?.cpu ?? [1]);
  for (const [mode, t] of totals) {
    console.log(
      `${mode.padEnd(16)} ${String(Math.round(mean(t.rps))).padStart(7)} req/s  ${(mean(t.rps) / bare).toFixed(2)}x bare  p50 ${mean(t.p50).toFixed(1)} ms  p99 ${Math.max(...t.p99)} ms  ${mean(t.cpu).toFixed(1)} µs CPU/req (bare/this ${(bareCpu / mean(t.cpu)).toFixed(2)})`,
    );
  }
}
