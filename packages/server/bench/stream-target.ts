// A child process of bench/stream.ts, so that each side is measured alone: `stream <db file>`
// (createStreamServer on a SqlitePriceLog), `bare` (a bare node:http broadcaster writing each
// published frame to every subscribed connection, the baseline) or `publisher <db file>` (appends
// each published event to the SQLite log, as `prices publish` does).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createStreamServer } from '../src/http/stream-server.ts';
import { silentLogger } from '../src/logger.ts';
import { SqlitePriceLog } from '../src/prices/sqlite/sqlite-price-log.ts';
import { encodeEvent, encodeRetry } from '../src/stream/frames.ts';

type Message = { type: 'memory' } | { type: 'publish'; id: number; event: string; data: string };

const [kind, dbFile] = process.argv.slice(2);
let server: http.Server | null = null;
if (kind === 'publisher') {
  const log = new SqlitePriceLog(dbFile ?? 'bench.db');
  process.on('message', (message: Message) => {
    if (message.type === 'publish') void log.append([message.data]);
  });
  process.send?.({ type: 'listening', port: 0 });
} else if (kind === 'stream') {
  const log = new SqlitePriceLog(dbFile ?? 'bench.db');
  server = createStreamServer({
    priceLog: log,
    keys: { createKey: async () => '', findPlan: async (key) => (key === 'bench' ? 'pro' : null) },
    logger: silentLogger,
    heartbeatMs: 15_000,
    maxBufferBytes: 1024 * 1024,
  }).server;
} else {
  // The baseline filters by topic too, so both deliver the same frames.
  const open = new Map<http.ServerResponse, Set<string>>();
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
    res.write(encodeRetry(2000));
    open.set(res, new Set(String(req.headers['topics']).split(',')));
    res.on('close', () => open.delete(res));
  });
  process.on('message', (message: Message) => {
    if (message.type !== 'publish') return;
    const frame = encodeEvent(message);
    for (const [res, topics] of open) if (topics.has(message.event)) res.write(frame);
  });
}

process.on('message', (message: Message) => {
  if (message.type !== 'memory') return;
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const { heapUsed, rss, external, arrayBuffers } = process.memoryUsage();
  process.send?.({ type: 'memory', heapUsed, rss, external, arrayBuffers });
});

if (server !== null) {
  const listening = server;
  listening.listen(0, '127.0.0.1', () => {
    process.send?.({ type: 'listening', port: (listening.address() as AddressInfo).port });
  });
}

// Exit normally on SIGTERM so `--cpu-prof` (BENCH_PROF=1) can write its profile.
process.on('SIGTERM', () => process.exit(0));
