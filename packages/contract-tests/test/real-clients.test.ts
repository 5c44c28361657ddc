// Real clients against the real stream server (issue 15 item 6): the packed @catalog/client in
// plain Node on a quiet topic for several idle timeouts; the packed client in headless Chromium,
// from another origin, across a server crash (SIGKILL, restart on the same port); the third-party
// `eventsource` client across the same crash. Events are appended to the server's SQLite price log
// from this process, as a publisher would.
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { EventSource } from 'eventsource';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installPackedClient } from '../../client/test/support/packed-client.ts';
import { SqlitePriceLog } from '../../server/src/prices/sqlite/sqlite-price-log.ts';
import { buildPriceEvent } from '@catalog/contract/testing';
import { createKey, freePorts, type Ports, type RunningServer, serve, type Workspace, workspace } from './support/server.ts';

const HEARTBEAT_MS = 200;
const TOPIC = 'price:marketplacea:us';

let ws: Workspace;
let project: string;
let db: string;
let key: string;
let log: SqlitePriceLog;
let ports: Ports;
let server: RunningServer;

async function publish(count: number, market = 'US'): Promise<number[]> {
  const events = Array.from({ length: count }, () => buildPriceEvent({ market }));
  return (await log.append(events)).map((event) => event.id);
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** SIGKILL, then a new process on the same ports and database, as a crash and a supervisor restart would. */
async function crashAndRestart(duringDowntime: () => Promise<unknown>): Promise<void> {
  await server.kill();
  await duringDowntime();
  await new Promise((resolve) => setTimeout(resolve, 300));
  server = await serve(db, ['--heartbeat-ms', String(HEARTBEAT_MS)], {}, ports);
}

beforeAll(async () => {
  ws = workspace('real-clients');
  const file = join(ws.dir, 'catalog.db');
  db = `sqlite:${file}`;
  key = await createKey(db, 'pro');
  ports = await freePorts();
  server = await serve(db, ['--heartbeat-ms', String(HEARTBEAT_MS)], {}, ports);
  log = new SqlitePriceLog(file);
  project = join(ws.dir, 'consumer');
  installPackedClient(project);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await log?.close();
  ws?.dispose();
});

describe('streamPrices with real clients', () => {
  it('keeps the packed client on one connection through several idle timeouts on a quiet topic', async () => {
    writeFileSync(
      join(project, 'quiet.js'),
      `import { createCatalogClient } from '@catalog/client';
const [sseUrl, apiKey, lastEventId] = process.argv.slice(2);
const client = createCatalogClient({ baseUrl: sseUrl, sseUrl, apiKey });
let reconnects = 0;
for await (const item of client.priceStream({ topics: ['price:marketplacea:jp'], lastEventId, idleTimeoutMs: 600, onReconnect: () => (reconnects += 1) })) {
  console.log(JSON.stringify({ id: item.id, topic: item.topic, reconnects }));
  break;
}
`,
    );
    // Resuming after an event on another topic: the JP event reaches a client that connects late on
    // a loaded machine by replay instead of being missed; one that connected in time waits through
    // the silence, as the test means.
    const [resumeAfter] = await publish(1, 'US');
    const child = spawn(process.execPath, ['quiet.js', server.streamUrl, key, String(resumeAfter)], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // Five idle timeouts of silence on the topic (heartbeats only), then one event.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const [id] = await publish(1, 'JP');
    expect(await exited, output).toBe(0);
    expect(JSON.parse(output.trim())).toEqual({ id, topic: 'price:marketplacea:jp', reconnects: 0 });
  }, 60_000);

  it('follows with the third-party eventsource client across a server crash, losing and repeating nothing', async () => {
    const received: number[] = [];
    let opened = 0;
    const source = new EventSource(`${server.streamUrl}/v1/stream`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, Authorization: `Bearer ${key}`, Topics: TOPIC } }),
    });
    source.addEventListener(TOPIC, (event) => received.push(Number(event.lastEventId)));
    source.addEventListener('open', () => (opened += 1));
    try {
      await until(() => opened === 1, 10_000, 'the first open');
      const before = await publish(3);
      await until(() => received.length === 3, 10_000, 'three events');
      let during: number[] = [];
      await crashAndRestart(async () => (during = await publish(3)));
      await until(() => received.length === 6, 20_000, 'the replay after the restart');
      const after = await publish(2);
      await until(() => received.length === 8, 10_000, 'two live events after the restart');
      expect(received).toEqual([...before, ...during, ...after]);
      expect(opened).toBeGreaterThanOrEqual(2);
    } finally {
      source.close();
    }
  }, 90_000);

  describe('in headless Chromium', () => {
    let browser: Browser;
    let origin: Server;

    beforeAll(async () => {
      const executablePath = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
      browser = await chromium.launch({
        executablePath,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
      // Another origin than the stream server: a page and the installed packed client's files.
      const modules = join(project, 'node_modules');
      const page = `<!doctype html><meta charset="utf-8"><title>prices</title>
<script type="importmap">{"imports":{"@catalog/client":"/m/@catalog/client/dist/index.js","eventsource-parser":"/m/eventsource-parser/dist/index.js"}}</script>
<script type="module">
import { createCatalogClient } from '@catalog/client';
window.received = [];
window.errors = [];
window.follow = (sseUrl, apiKey, topic) => {
  const client = createCatalogClient({ baseUrl: sseUrl, sseUrl, apiKey });
  (async () => {
    for await (const item of client.priceStream({ topics: [topic], maxRetryDelayMs: 500, onReconnect: ({ error }) => window.errors.push(String(error)) })) {
      window.received.push(item.type === 'price' ? item.id : 'reset');
    }
  })().catch((error) => window.errors.push('fatal: ' + String(error)));
};
window.ready = true;
</script>`;
      origin = createServer((req, res) => {
        const path = new URL(req.url ?? '/', 'http://origin.invalid').pathname;
        if (path === '/') {
          res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page);
          return;
        }
        const file = normalize(join(modules, path.replace(/^\/m\//, '')));
        if (!path.startsWith('/m/') || !file.startsWith(modules)) {
          res.writeHead(404).end();
          return;
        }
        try {
          const body = readFileSync(file);
          res.writeHead(200, { 'Content-Type': extname(file) === '.js' ? 'text/javascript' : 'application/octet-stream' }).end(body);
        } catch {
          res.writeHead(404).end();
        }
      });
      await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => origin?.close(resolve));
    });

    it('follows the stream from another origin with the packed client across a server crash, losing and repeating nothing', async () => {
      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(String(error)));
      // localhost vs 127.0.0.1: a different origin than the stream server's.
      await page.goto(`http://localhost:${(origin.address() as AddressInfo).port}/`);
      await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
      const received = async (): Promise<(number | string)[]> => page.evaluate(() => (window as unknown as { received: (number | string)[] }).received);
      await page.evaluate(([url, apiKey, topic]) => (window as unknown as { follow(u: string, k: string, t: string): void }).follow(url, apiKey, topic), [
        server.streamUrl,
        key,
        TOPIC,
      ] as const);
      // Live only from the first connect: wait until it is open by publishing until one arrives.
      const first: number[] = [];
      for (let attempt = 0; attempt < 40 && (await received()).length === 0; attempt += 1) {
        first.push(...(await publish(1)));
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const initial = await received();
      expect(initial.length, pageErrors.join('\n')).toBeGreaterThan(0);
      const before = await publish(3);
      const expectedBefore = [...initial, ...first.filter((id) => id > Number(initial.at(-1))), ...before];
      let during: number[] = [];
      await crashAndRestart(async () => (during = await publish(3)));
      const after = await publish(2);
      const expected = [...expectedBefore, ...during, ...after];
      const deadline = Date.now() + 30_000;
      while ((await received()).length < expected.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await received()).toEqual(expected);
      expect(pageErrors).toEqual([]);
      const errors = await page.evaluate(() => (window as unknown as { errors: string[] }).errors);
      expect(errors.filter((error) => error.startsWith('fatal'))).toEqual([]);
      await page.close();
    }, 90_000);
  });
});
