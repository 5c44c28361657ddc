// Benchmark (not a test): SUBSCRIBERS clients on all topics while RATE events/s are published for
// SECONDS, against the stream server and, in the same run, a bare node:http broadcaster. Prints
// publish-to-receive p50/p99, delivered events/s and server memory per connection; asserts nothing.
//
//   node --expose-gc bench/stream.ts     SUBSCRIBERS=1000 RATE=100 SECONDS=10 TOPICS_PER_SUBSCRIBER=4
//                                        by default; BENCH_PROF=1 writes the servers' CPU profiles to <tmp>/stream-bench-profiles/
//
// The stream server is fed the way `prices publish` feeds it: a publisher process appends to the
// SQLite log (commit with fsync), so its latency includes the commit and the cross-process poll.
// The baseline gets each frame over IPC and writes it at once. Both are timed from the moment
// this process sends the event. Clients run in this process, sharing the machine's cores.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatNanoseconds } from '../src/prices/simulator.ts';

const SUBSCRIBERS = Number(process.env['SUBSCRIBERS'] ?? 1000);
const RATE = Number(process.env['RATE'] ?? 100);
const SECONDS = Number(process.env['SECONDS'] ?? 10);
const MARKETS = ['us', 'uk', 'de', 'fr', 'nl', 'jp', 'ca', 'au'];
const TOPICS = ['marketplacea', 'marketplaceb'].flatMap((source) => MARKETS.map((market) => `price:${source}:${market}`));
const TOPICS_PER_SUBSCRIBER = Math.min(TOPICS.length, Number(process.env['TOPICS_PER_SUBSCRIBER'] ?? 4));
/** Subscribers that parse every frame to time it; the others only count frames. */
const PROBES = Math.min(SUBSCRIBERS, Number(process.env['PROBES'] ?? 100));

function topicsOf(subscriber: number): string[] {
  return Array.from({ length: TOPICS_PER_SUBSCRIBER }, (_, k) => TOPICS[(subscriber + k * 3) % TOPICS.length] as string);
}
const HERE = path.dirname(fileURLToPath(import.meta.url));
const PROFILE_DIR = path.join(os.tmpdir(), 'stream-bench-profiles');

interface Memory {
  heapUsed: number;
  rss: number;
  external: number;
  arrayBuffers: number;
}

interface Result {
  target: string;
  p50: number;
  p99: number;
  max: number;
  delivered: number;
  expected: number;
  eventsPerSecond: number;
  heapPerConnection: number;
  rssPerConnection: number;
}

function progress(message: string): void {
  process.stderr.write(`${message}\n`);
}

function request<T>(child: ChildProcess, message: object, type: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (reply: { type: string }): void => {
      if (reply.type !== type) return;
      child.off('message', onMessage);
      resolve(reply as T);
    };
    child.on('message', onMessage);
    if (Object.keys(message).length > 0) child.send(message);
  });
}

function buildLine(n: number): { topic: string; data: string } {
  const topic = TOPICS[n % TOPICS.length] as string;
  const [, source, market] = topic.split(':') as [string, string, string];
  const data = JSON.stringify({
    source,
    product_id: '3f0e9a8c-6f0b-4c55-9d8e-2a1b7c4d5e6f',
    variant_id: `bench-${n}`,
    size: '10.5',
    price: 189.99,
    currency: 'USD',
    market: market.toUpperCase(),
    sku: 'DD1391-100',
    timestamp: formatNanoseconds(BigInt(Date.now()) * 1_000_000n),
  });
  return { topic, data };
}

async function connectAll(port: number, sent: Map<number, number>, latencies: number[]): Promise<{ sockets: http.ClientRequest[]; received: () => number; expected: (published: number) => number }> {
  let received = 0;
  const sockets: http.ClientRequest[] = [];
  const topicSets: Set<string>[] = [];
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const opened: Promise<void>[] = [];
  const FRAME_END = 0x0a;
  for (let i = 0; i < SUBSCRIBERS; i += 1) {
    const topics = topicsOf(i);
    topicSets.push(new Set(topics));
    const probe = i < PROBES;
    opened.push(
      new Promise((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/v1/stream', agent, headers: { Authorization: 'Bearer bench', Topics: topics.join(',') } }, (res) => {
          let pending = '';
          let lastWasNewline = false;
          let frames = 0;
          res.on('data', (chunk: Buffer) => {
            const now = performance.now();
            if (!probe) {
              // Count blank lines (frame ends) without decoding.
              for (let at = chunk.indexOf(FRAME_END); at !== -1; at = chunk.indexOf(FRAME_END, at + 1)) {
                const previous = at === 0 ? lastWasNewline : chunk[at - 1] === FRAME_END;
                if (previous) {
                  frames += 1;
                  if (frames === 1) resolve();
                  else received += 1;
                }
              }
              lastWasNewline = chunk[chunk.length - 1] === FRAME_END;
              return;
            }
            pending += chunk.toString('utf8');
            let end = pending.indexOf('\n\n');
            while (end !== -1) {
              const frame = pending.slice(0, end);
              pending = pending.slice(end + 2);
              end = pending.indexOf('\n\n');
              frames += 1;
              if (frames === 1) {
                resolve();
                continue;
              }
              received += 1;
              const match = /"variant_id":"bench-(\d+)"/.exec(frame);
              const at = match === null ? undefined : sent.get(Number(match[1]));
              if (at !== undefined) latencies.push(now - at);
            }
          });
        });
        req.on('error', reject);
        sockets.push(req);
      }),
    );
    if (i % 100 === 99) await Promise.all(opened.slice(-100));
  }
  await Promise.all(opened);
  const expected = (published: number): number => {
    let total = 0;
    for (let n = 0; n < published; n += 1) {
      const topic = TOPICS[n % TOPICS.length] as string;
      for (const set of topicSets) if (set.has(topic)) total += 1;
    }
    return total;
  };
  return { sockets, received: () => received, expected };
}

async function run(target: 'bare' | 'stream'): Promise<Result> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-stream-'));
  const dbFile = path.join(dir, 'catalog.db');
  const child = fork(path.join(HERE, 'stream-target.ts'), [target, dbFile], { execArgv: ['--expose-gc', ...(process.env['BENCH_PROF'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`])], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const publisher = target === 'stream' ? fork(path.join(HERE, 'stream-target.ts'), ['publisher', dbFile], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }) : child;
  try {
    const { port } = await request<{ port: number }>(child, {}, 'listening');
    if (publisher !== child) await request(publisher, {}, 'listening');
    const before = await request<Memory>(child, { type: 'memory' }, 'memory');
    const sent = new Map<number, number>();
    const latencies: number[] = [];
    progress(`${target}: connecting ${SUBSCRIBERS} subscribers`);
    const clients = await connectAll(port, sent, latencies);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const idle = await request<Memory>(child, { type: 'memory' }, 'memory');
    progress(`${target}: publishing ${RATE} events/s for ${SECONDS} s`);
    const total = Math.round(RATE * SECONDS);
    const started = performance.now();
    for (let n = 0; n < total; n += 1) {
      const due = started + (n * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const { topic, data } = buildLine(n);
      sent.set(n, performance.now());
      publisher.send({ type: 'publish', id: n + 1, event: topic, data });
    }
    const expected = clients.expected(total);
    const deadline = performance.now() + 10_000;
    while (clients.received() < expected && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const elapsed = (performance.now() - started) / 1000;
    for (const socket of clients.sockets) socket.destroy();
    const at = percentile(latencies);
    return {
      target: target === 'bare' ? 'bare node:http broadcaster' : 'stream server (SQLite log, cross-process publish)',
      p50: at(0.5),
      p99: at(0.99),
      max: at(1),
      delivered: clients.received(),
      expected,
      eventsPerSecond: clients.received() / elapsed,
      heapPerConnection: (idle.heapUsed + idle.external - before.heapUsed - before.external) / SUBSCRIBERS,
      rssPerConnection: (idle.rss - before.rss) / SUBSCRIBERS,
    };
  } finally {
    for (const process of new Set([child, publisher])) {
      const exited = new Promise((resolve) => process.once('exit', resolve));
      process.kill();
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function percentile(values: number[]): (q: number) => number {
  values.sort((a, b) => a - b);
  return (q) => values[Math.min(values.length - 1, Math.floor(q * values.length))] ?? NaN;
}

const results = [await run('bare'), await run('stream')];
const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;
const ms = (value: number): string => `${value.toFixed(1)} ms`;
console.log(`\nload average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ${SUBSCRIBERS} subscribers, ${RATE} events/s for ${SECONDS} s, each on ${TOPICS_PER_SUBSCRIBER} of ${TOPICS.length} topics, ${PROBES} probes timing every frame (${os.cpus().length} cores)\n`);
if (process.env['BENCH_PROF'] !== undefined) console.log(`CPU profiles: ${PROFILE_DIR}`);
console.table(
  results.map((r) => ({
    target: r.target,
    'p50': ms(r.p50),
    'p99': ms(r.p99),
    'max': ms(r.max),
    'delivered': `${r.delivered}/${r.expected}`,
    'delivered/s': Math.round(r.eventsPerSecond),
    'heap+external/conn': kb(r.heapPerConnection),
    'rss/conn': kb(r.rssPerConnection),
  })),
);
