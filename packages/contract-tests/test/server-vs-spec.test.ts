// The real server against the spec (issue 6 items 2, 3 and 4). Fixture data is built here, imported
// with the CLI, and served on port 0 from a temporary SQLite file. Every case of server-cases.ts
// runs against it: the status must be the case's, the response must validate (status documented,
// content type, body schema incl. error bodies, documented headers), free-plan products must be
// exactly CatalogProductFree, and the same request sent through `prism proxy` must raise no response
// violation. Then the generated-requests checker runs against the server, and a server whose
// database is broken mid-run must still answer in documented shapes. One Prism proxies to all four
// listeners (two servers, API and stream each) through an upstream switch the request's header picks.
import { openSync, writeSync, closeSync, copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations as contractOperations, type OperationId } from '@catalog/contract';
import { FC_RUNS, FC_SEED, runGeneratedRequests, type Target } from './requests.ts';
import { type CaseContext, MONITOR_URL, SERVER_CASES, type ServerCase } from './server-cases.ts';
import { CATALOG, DUNK_PRICES, STOREFRONT, toNdjson } from './support/fixtures.ts';
import { type Prism, parseViolations, responseViolations, startPrism, startUpstreamSwitch, UPSTREAM_HEADER, type UpstreamSwitch } from './support/prism.ts';
import { cli, createKey, importProducts, publishPrices, type RunningServer, serve, type Workspace, workspace } from './support/server.ts';
import { operations, validateFreeProduct, validateResponse } from './support/spec.ts';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

/** Sends one request; an event stream is answered by its headers alone (the body never ends). */
async function send(baseUrl: string, c: Pick<ServerCase, 'method' | 'path'>, headers: Record<string, string>): Promise<Answer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 15_000);
  try {
    const response = await fetch(`${baseUrl}${c.path}`, { method: c.method ?? 'GET', headers, signal: controller.signal });
    if (response.headers.get('content-type')?.startsWith('text/event-stream') === true) {
      await response.body?.cancel();
      return { status: response.status, headers: response.headers, text: '', body: undefined };
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: response.status, headers: response.headers, text, body };
  } finally {
    clearTimeout(timer);
  }
}

async function seedDatabase(ws: Workspace, name: string): Promise<{ db: string; ctx: CaseContext }> {
  const db = `sqlite:${join(ws.dir, name)}`;
  await importProducts(db, 'catalog', ws.file(`${name}.catalog.ndjson`, toNdjson(Object.values(CATALOG))));
  await importProducts(db, 'storefront', ws.file(`${name}.storefront.ndjson`, toNdjson(STOREFRONT)));
  const [freeKey, proKey] = [await createKey(db, 'free'), await createKey(db, 'pro')];
  await publishPrices(db, ws.file(`${name}.prices.ndjson`, toNdjson(DUNK_PRICES)));
  // A monitor of the Pro key (listMonitors), on an endpoint nothing answers: it is never read for, as no price moves.
  await cli(['monitors', 'add', '--db', db, '--key', proKey, '--url', MONITOR_URL, '--filter', `product_id = "${CATALOG.dunk.id}"`]);
  return { db, ctx: { freeKey, proKey } };
}

describe('the real server', () => {
  let ws: Workspace;
  let ctx: CaseContext;
  let main: RunningServer;
  let limited: RunningServer;
  let upstreams: UpstreamSwitch;
  let proxy: Prism;

  const onStream = (operationId: string): boolean => contractOperations[operationId as OperationId].listener === 'stream';
  const baseUrl = (server: RunningServer, operationId: string) => (onStream(operationId) ? server.streamUrl : server.apiUrl);
  /** The same request through `prism proxy`, to the named server's listener for the operation. */
  const throughProxy = (server: 'main' | 'limited', c: Pick<ServerCase, 'operationId' | 'method' | 'path'>, headers: Record<string, string>) =>
    proxy.fetch(c.path, { method: c.method ?? 'GET', headers: { ...headers, [UPSTREAM_HEADER]: `${server}:${onStream(c.operationId) ? 'stream' : 'api'}` } });

  beforeAll(async () => {
    ws = workspace('server');
    const seeded = await seedDatabase(ws, 'catalog.db');
    ctx = seeded.ctx;
    // A copy for the test that breaks its database, taken while no server has the file open.
    for (const suffix of ['', '-wal']) if (existsSync(join(ws.dir, `catalog.db${suffix}`))) copyFileSync(join(ws.dir, `catalog.db${suffix}`), join(ws.dir, `broken.db${suffix}`));
    // The generated requests send hundreds of unknown keys from one address: the main server takes
    // them all as 401s; the limited one counts every request.
    [main, limited] = await Promise.all([serve(seeded.db, ['--auth-failure-limit', '0']), serve(seeded.db, ['--rate-limit', '1'])]);
    upstreams = await startUpstreamSwitch({ 'main:api': main.apiUrl, 'main:stream': main.streamUrl, 'limited:api': limited.apiUrl, 'limited:stream': limited.streamUrl }, 'main:api');
    proxy = await startPrism({ mode: 'proxy', upstream: upstreams.url });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([main?.stop(), limited?.stop(), proxy?.stop()]);
    await upstreams?.close();
    ws?.dispose();
  });

  for (const op of operations) {
    describe(op.operationId, () => {
      for (const c of SERVER_CASES.filter((x) => x.operationId === op.operationId)) {
        it(`returns ${c.status}: ${c.behaviour}`, async () => {
          const headers = c.headers(ctx);
          if (c.server === 'rate-limited') {
            // Limit 1 per minute per key: the first request may pass, the next ones must not.
            await send(baseUrl(limited, c.operationId), c, headers);
            const answer = await send(baseUrl(limited, c.operationId), c, headers);
            expect(answer.status).toBe(429);
            expect(validateResponse(c.operationId, answer.status, answer.headers, answer.text)).toEqual([]);
            expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
            c.expectBody?.(answer.body, answer.headers);
            const proxied = await throughProxy('limited', c, headers);
            await proxied.text();
            expect(proxied.status).toBe(429);
            expect(responseViolations(parseViolations(proxied.headers.get('sl-violations')))).toEqual([]);
            return;
          }
          const answer = await send(baseUrl(main, c.operationId), c, headers);
          expect(answer.status, answer.text).toBe(c.status);
          expect(validateResponse(c.operationId, answer.status, answer.headers, answer.text)).toEqual([]);
          c.expectBody?.(answer.body, answer.headers);
          // The same request through `prism proxy`. A live stream never completes, so Prism cannot
          // relay it; its refusals are relayed and judged like every other response.
          if (onStream(c.operationId) && c.status === 200) return;
          const proxied = await throughProxy('main', c, headers);
          const proxiedText = await proxied.text();
          expect(proxied.status, proxiedText).toBe(c.status);
          expect(responseViolations(parseViolations(proxied.headers.get('sl-violations')))).toEqual([]);
        });
      }

      if (op.operationId === 'getProduct') {
        it('gives a free key no Pro field on any product, by id or slug, bare or bearer', async () => {
          for (const product of Object.values(CATALOG)) {
            for (const [id, authorization] of [[product.id, ctx.freeKey], [product.slug, `Bearer ${ctx.freeKey}`]] as const) {
              const answer = await send(main.apiUrl, { path: `/v2/products/${id}` }, { Authorization: authorization });
              expect(answer.status, answer.text).toBe(200);
              expect(validateResponse('getProduct', 200, answer.headers, answer.text)).toEqual([]);
              expect(validateFreeProduct(answer.body), id).toEqual([]);
            }
          }
        });
      }

      it(`conforms on ${FC_RUNS} valid and ${FC_RUNS} invalid generated requests (seed ${FC_SEED})`, async () => {
        const target: Target = {
          name: 'real server',
          baseUrl: (o) => baseUrl(main, o.operationId),
          validKey: ctx.proKey,
          knowsKeys: true,
          answersWrongMethods: true,
          semanticValidation: true,
          reportsViolations: false,
          knownValues: {
            id: Object.values(CATALOG).flatMap((p) => [p.id, p.slug]),
            sku: Object.values(CATALOG).map((p) => p.sku),
            gtin: ['195866123458', '00195866123458', '5866123'],
            shop_name: ['Sneaker Hub', 'kicks corner'],
          },
        };
        const counts = await runGeneratedRequests(op, target);
        process.stderr.write(`${op.operationId} on the real server (FC_SEED=${FC_SEED}): ${counts.valid} valid, ${counts.invalid} invalid\n`);
        expect(counts.valid).toBeGreaterThanOrEqual(FC_RUNS);
        expect(counts.invalid).toBeGreaterThanOrEqual(FC_RUNS);
        // The same generated traffic through `prism proxy`: Prism must find no response violation, and
        // must agree with the sampler on which requests break the schema. A live stream cannot be relayed.
        if (onStream(op.operationId)) return;
        // Without the upstream header, the switch sends them to the main server's API.
        const viaProxy = await runGeneratedRequests(op, { ...target, name: 'real server through prism proxy', baseUrl: () => proxy.url, reportsViolations: true });
        expect(viaProxy.invalid).toBeGreaterThanOrEqual(FC_RUNS);
      }, 120_000);
    });
  }

  describe('a server whose database breaks mid-run', () => {
    it('answers every operation in a documented shape (500 or 503 when it cannot serve)', async () => {
      const server = await serve(`sqlite:${join(ws.dir, 'broken.db')}`);
      try {
        // Overwrite the open database (same inode) and its journal files with garbage.
        for (const suffix of ['', '-wal', '-shm']) {
          const path = join(ws.dir, `broken.db${suffix}`);
          if (!existsSync(path)) continue;
          const fd = openSync(path, 'r+');
          writeSync(fd, Buffer.alloc(64 * 1024, 0x5a), 0, 64 * 1024, 0);
          closeSync(fd);
        }
        const seen: string[] = [];
        for (const c of SERVER_CASES.filter((x) => x.server === 'main' && (x.status === 200 || x.status === 404))) {
          const answer = await send(baseUrl(server, c.operationId), c, c.headers(ctx)).catch((error: unknown) => {
            throw new Error(`the server stopped answering after its database broke (${c.operationId}):\n${server.logs.slice(-20).join('\n')}`, { cause: error });
          });
          seen.push(`${c.operationId} ${answer.status}`);
          expect(validateResponse(c.operationId, answer.status, answer.headers, answer.text), `${c.operationId} ${answer.status} ${answer.text}`).toEqual([]);
          if (answer.status >= 500) expect((answer.body as { error?: string }).error).toBe(answer.status === 503 ? 'service_unavailable' : 'internal_error');
        }
        process.stderr.write(`broken database answers: ${seen.join(', ')}\n`);
      } finally {
        await server.stop();
      }
    }, 60_000);
  });
});

