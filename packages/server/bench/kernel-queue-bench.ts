// Measures what reading the kernel's send queues (http/kernel-send-queue.ts) costs the stream
// listener's event loop with many idle streams open (issue 29 item 3): the stream server in one
// process with a 1 s heartbeat, N subscribers in another that read everything, and the server's
// event-loop delay (perf_hooks.monitorEventLoopDelay) over the measured seconds. Two modes,
// alternated round by round: `reference` never reads /proc (every socket reads as 0), `proc` is
// the server as it ships. Also counts the /proc table reads per second. Reports, never asserts.
//   node bench/kernel-queue-bench.ts [--streams 10000] [--seconds 10] [--rounds 2]
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KernelSendQueues } from '../src/http/kernel-send-queue.ts';
import { raiseOpenFileLimit } from '../src/http/listener-limits.ts';
import { createStreamServer } from '../src/http/stream-server.ts';
import { silentLogger } from '../src/logger.ts';
import { SqlitePriceLog } from '../src/prices/sqlite/sqlite-price-log.ts';
import { FakeKeyStore } from '../test/support/fake-catalog-store.ts';

const MODES = ['reference', 'proc'] as const;
type Mode = (typeof MODES)[number];
const KEY = 'ck_bench_pro';
const TOPIC = 'price:marketplacea:us';
const SELF = fileURLToPath(import.meta.url);

const { values } = parseArgs({
  options: {
    serve: { type: 'string' },
    subscribe: { type: 'string' },
    streams: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
  },
});

type Report = { p50: number; p99: number; max: number; procReadsPerSecond: number };

async function serve(mode: Mode): Promise<void> {
  raiseOpenFileLimit(silentLogger);
  let reads = 0;
  const read = (): string[] => {
    reads += 1;
    return ['/proc/net/tcp', '/proc/net/tcp6'].map((table) => readFileSync(table, 'utf8'));
  };
  const priceLog = new SqlitePriceLog(':memory:');
  const stream = createStreamServer({
    priceLog,
    keys: new FakeKeyStore({ [KEY]: 'pro' }),
    logger: silentLogger,
    heartbeatMs: 1_000,
    maxBufferBytes: 1 << 20,
    maxStreamsPerKey: 1_000_000,
    limits: { maxConnections: 1_000_000, headersTimeoutMs: 60_000 },
    kernelQueues: mode === 'reference' ? { bytes: () => 0 } : new KernelSendQueues(read),
  });
  await new Promise<void>((resolve) => stream.server.listen(0, '127.0.0.1', resolve));
  process.send!({ port: (stream.server.address() as AddressInfo).port });
  process.on('message', (message: { measure: number }) => {
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    reads = 0;
    histogram.enable();
    setTimeout(() => {
      histogram.disable();
      const ms = (ns: number) => Math.round(ns / 1e4) / 100;
      const report: Report = { p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max), procReadsPerSecond: reads / message.measure };
      process.send!(report, () => process.exit(0));
    }, message.measure * 1000);
  });
}

async function subscribe(port: number, count: number): Promise<void> {
  raiseOpenFileLimit(silentLogger);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  let open = 0;
  const opening: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    opening.push(
      new Promise((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: '/v1/stream', agent, headers: { authorization: `Bearer ${KEY}`, topics: TOPIC, accept: 'text/event-stream' } }, (res) => {
            if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
            res.resume();
            open += 1;
            resolve();
          })
          .on('error', reject);
      }),
    );
    // A few hundred at a time, so the listener's backlog is not overrun.
    if (i % 200 === 199) await Promise.all(opening.slice(-200));
  }
  await Promise.all(opening);
  process.send!({ open });
}

async function round(mode: Mode, streams: number, seconds: number): Promise<Report> {
  const server = fork(SELF, ['--serve', mode], { stdio: 'inherit' });
  const [{ port }] = (await once(server, 'message')) as [{ port: number }];
  const subscribers: ChildProcess = fork(SELF, ['--subscribe', String(port), '--streams', String(streams)], { stdio: 'inherit' });
  const [{ open }] = (await once(subscribers, 'message')) as [{ open: number }];
  process.stderr.write(`  ${mode}: ${open} streams open; measuring ${seconds} s\n`);
  // Let the opening burst settle (a few heartbeats) before measuring.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  server.send({ measure: seconds });
  const [report] = (await once(server, 'message')) as [Report];
  subscribers.kill();
  await once(server, 'exit');
  return report;
}

if (values.serve !== undefined) {
  await serve(values.serve as Mode);
} else if (values.subscribe !== undefined) {
  await subscribe(Number(values.subscribe), Number(values.streams));
} else {
  const streams = Number(values.streams);
  const seconds = Number(values.seconds);
  const rows: { mode: Mode; report: Report }[] = [];
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const mode of MODES) rows.push({ mode, report: await round(mode, streams, seconds) });
  }
  process.stdout.write(`| mode | streams | event-loop delay p50 (ms) | p99 (ms) | max (ms) | /proc reads per s |\n| --- | ---: | ---: | ---: | ---: | ---: |\n`);
  for (const { mode, report } of rows) {
    process.stdout.write(`| ${mode} | ${streams} | ${report.p50} | ${report.p99} | ${report.max} | ${report.procReadsPerSecond.toFixed(1)} |\n`);
  }
}
