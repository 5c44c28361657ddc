// Filtered price streams (issue 26), each run beside its unfiltered reference in the same
// process run, on the embedded (SQLite) and the Redis price log:
// - `ids`: 10,000 subscribers each watching 100 products of 100,000 (`Filter: product_id IN
//   [...]`) while 1,000 events/s are published over those 100,000 products (about 10 deliveries
//   per event), against two unfiltered references with the same connections and deliveries per
//   second: 10,000 subscribers at 1 event/s each reaching all of them (bursts), and 10,000
//   subscribers spread over 1,000 topics at 1,000 events/s (the filtered row's pattern, see
//   scenarios()): p99 publish-to-receive and the server's CPU per delivered event;
// - `price`: 5,000 subscribers each with a different `price < X AND market = "US"` at 100 events/s,
//   against 5,000 unfiltered subscribers at 100 events/s: p99.
// Subscribers are spread over `--workers` forked processes (stream/subscriber-worker.ts),
// subscriber i in worker i mod N, so the load generator is not one saturated event loop; each
// worker times publish-to-receive from the event's own timestamp and the samples are merged.
// Events go through `catalog prices publish -`; the server's CPU is read from /proc/<pid>/stat.
// `--rounds R` repeats each group of scenarios (its references and the filtered row), alternating
// the order.
// The Redis rows run on database 13 (`--redis` names another), each under a key prefix of its own
// (`watch-bench:<pid>:<row>:`), so a row starts on an empty log and shares no keys with other
// runs on the same Redis; a row's keys are deleted after it. `--cli PATH` drives another build
// of the CLI (a checkout of another commit), for before/after runs of the same harness.
//
//   node bench/watch-bench.ts [--duration S] [--only ids,price] [--logs sqlite,redis] [--scale F]
//                             [--workers N] [--rounds R] [--cpu-prof DIR] [--redis URL] [--cli PATH]
// `--only ids-control` adds the ids filters in the reference's delivery pattern (see scenarios()).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { buildPriceEvent } from '@catalog/contract/testing';
import { childEnv, forkHelper, progress, readRssKib, runCli, SERVER_DIR, sleep, startServer, stopChild, type RunningServer } from './lib/processes.ts';
import { summarize, type LatencySummary } from './lib/stats.ts';
import { encodeTimestamp, wallClockMs } from './stream/price-events.ts';
import type { WorkerCommand, WorkerReply } from './stream/subscriber-worker.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    only: { type: 'string', default: 'ids,price' },
    logs: { type: 'string', default: 'sqlite,redis' },
    scale: { type: 'string', default: '1' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379/13' },
    cli: { type: 'string' },
    workers: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '1' },
    /** Writes a V8 CPU profile of each server (every thread) into this directory. */
    'cpu-prof': { type: 'string' },
  },
});
const durationSeconds = Number(values.duration);
/** Scales subscriber counts down for a smoke run (e.g. 0.1). */
const scale = Number(values.scale);
const workerCount = Math.max(1, Number(values.workers));
const rounds = Math.max(1, Number(values.rounds));
const CLI = values.cli ?? join(SERVER_DIR, 'src/cli/main.ts');
const TOPIC = 'price:marketplacea:us';
const PRODUCTS = 100_000;
const WATCHED_PER_SUBSCRIBER = 100;
const SPREAD_TOPICS = 1_000;

const productId = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

interface Run {
  scenario: string;
  log: string;
  round: number;
  subscribers: number;
  connected: number;
  rate: number;
  published: number;
  delivered: number;
  /** Chunks the subscribers read that held events: delivered ÷ this is about the events per server write. */
  eventChunks: number;
  latency: LatencySummary;
  cpuMs: number;
  /** Of cpuMs, in the kernel: on loopback a socket write also runs the receiver's side of TCP. */
  systemMs: number;
  cpuUsPerDelivered: number;
  closedEarly: number;
  /** The server's resident set once the events are delivered, MiB. */
  rssMib: number;
}

/** The process's CPU time in user and in kernel mode, ms. */
function cpuMsOf(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command name; clock ticks of 10 ms.
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

/** CPU ms (user + kernel) by thread name (`comm`: the stream thread, V8's GC helpers, libuv's pool), summed over threads of one name. */
function cpuMsByThread(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return byName;
}

function ask<T extends WorkerReply['type']>(worker: ChildProcess, command: WorkerCommand, type: T): Promise<Extract<WorkerReply, { type: T }>> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown): void => {
      if ((message as WorkerReply).type !== type) return;
      worker.off('message', onMessage);
      resolve(message as Extract<WorkerReply, { type: T }>);
    };
    worker.on('message', onMessage);
    worker.send(command);
  });
}

function publisher(priceLogUrl: string): { write(line: string): void; close(): Promise<void> } {
  const child = spawn(process.execPath, [CLI, 'prices', 'publish', '--price-log', priceLogUrl, '-'], { cwd: SERVER_DIR, env: childEnv(), stdio: ['pipe', 'ignore', 'inherit'] });
  const input = child.stdin;
  input.on('error', () => {});
  return {
    write: (line) => input.write(line),
    close: async () => {
      const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
      input.end();
      await exited;
    },
  };
}

interface Scenario {
  name: string;
  subscribers: number;
  rate: number;
  filters: string[] | null;
  /** A `Topics` header per subscriber (subscriber i sends topics[i % length]) instead of the one topic; not with `filters`. */
  topics?: string[];
  /** Every how many subscribers one is timed. */
  sampleEvery: number;
  /** The event published at sequence n. */
  event(n: number, publishedAtMs: number): object;
}

/** Node flags for the server: a CPU profile per thread (main and stream), named after the run. */
function cpuProfileArgs(scenario: Scenario, log: string, round: number): string[] {
  const dir = values['cpu-prof'];
  if (dir === undefined) return [];
  const name = `${log}-${scenario.name.replace(/[^a-z0-9]+/gi, '-')}-r${round}`;
  return ['--cpu-prof', '--cpu-prof-dir', join(dir, name)];
}

/** Subscriber i goes to worker i mod N: worker k gets every Nth of the per-subscriber values. */
function shareOf<T>(items: readonly T[], worker: number): T[] {
  return items.filter((_, index) => index % workerCount === worker);
}

const countOf = (subscribers: number, worker: number): number => Math.floor(subscribers / workerCount) + (worker < subscribers % workerCount ? 1 : 0);

async function runScenario(server: RunningServer, proKey: string, priceLogUrl: string, scenario: Scenario, log: string, round: number): Promise<Run> {
  const label = `${scenario.name} ${log} ${scenario.subscribers} subs × ${scenario.rate}/s (round ${round})`;
  const workers = await Promise.all(
    Array.from({ length: workerCount }, async () => (await forkHelper<WorkerReply>(new URL('./stream/subscriber-worker.ts', import.meta.url).pathname)).child),
  );
  const askAll = <T extends WorkerReply['type']>(command: WorkerCommand | ((worker: number) => WorkerCommand), type: T) =>
    Promise.all(workers.map((worker, index) => ask(worker, typeof command === 'function' ? command(index) : command, type)));
  const feed = publisher(priceLogUrl);
  try {
    const started = performance.now();
    const replies = await askAll(
      (index) => ({
        type: 'start',
        url: `${server.streamUrl}/v1/stream`,
        headers: { authorization: `Bearer ${proKey}`, topics: TOPIC },
        count: countOf(scenario.subscribers, index),
        sampleEvery: scenario.sampleEvery,
        concurrency: Math.ceil(100 / workerCount),
        ...(scenario.filters === null ? {} : { perSubscriber: { name: 'filter', values: shareOf(scenario.filters, index) } }),
        ...(scenario.topics === undefined ? {} : { perSubscriber: { name: 'topics', values: shareOf(scenario.topics, index) } }),
      }),
      'connected',
    );
    const connected = replies.reduce((total, reply) => total + reply.connected, 0);
    const failed = replies.reduce((total, reply) => total + reply.failed, 0);
    const statuses: Record<string, number> = {};
    for (const reply of replies) for (const [status, count] of Object.entries(reply.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
    progress(`${label}: ${connected} connected, ${failed} failed in ${(performance.now() - started).toFixed(0)} ms over ${workerCount} workers ${JSON.stringify(statuses)}`);
    await sleep(2000);
    await askAll({ type: 'reset' }, 'reset');
    const cpuBefore = cpuMsOf(server.pid);
    const threadsBefore = cpuMsByThread(server.pid);
    let sequence = 0;
    const startedAt = wallClockMs();
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const elapsed = wallClockMs() - startedAt;
        const due = Math.min(Math.floor((elapsed / 1000) * scenario.rate), durationSeconds * scenario.rate);
        const lines: string[] = [];
        while (sequence < due) lines.push(`${JSON.stringify(scenario.event(++sequence, wallClockMs()))}\n`);
        if (lines.length > 0) feed.write(lines.join(''));
        if (elapsed >= durationSeconds * 1000) {
          clearInterval(timer);
          resolve();
        }
      }, 10);
    });
    // Let the last events arrive, then read the CPU before anything else runs on the server.
    const countAll = async (): Promise<number> => (await askAll({ type: 'count' }, 'count')).reduce((total, reply) => total + reply.events, 0);
    let last = await countAll();
    for (let quiet = 0; quiet < 8; ) {
      await sleep(250);
      const now = await countAll();
      quiet = now === last ? quiet + 1 : 0;
      last = now;
    }
    const cpuAfter = cpuMsOf(server.pid);
    const threads = [...cpuMsByThread(server.pid)].map(([name, ms]) => `${name} ${ms - (threadsBefore.get(name) ?? 0)}`).join(', ');
    const systemMs = cpuAfter.system - cpuBefore.system;
    const cpuMs = cpuAfter.user - cpuBefore.user + systemMs;
    const rssMib = readRssKib(server.pid) / 1024;
    const reports = await askAll({ type: 'report' }, 'report');
    const delivered = reports.reduce((total, report) => total + report.events, 0);
    const run: Run = {
      scenario: scenario.name, log, round, subscribers: scenario.subscribers, connected, rate: scenario.rate, published: sequence,
      delivered, eventChunks: reports.reduce((total, report) => total + report.eventChunks, 0), latency: summarize(reports.flatMap((report) => report.latencies)), cpuMs, systemMs, cpuUsPerDelivered: (cpuMs * 1000) / Math.max(1, delivered),
      closedEarly: reports.reduce((total, report) => total + report.closedEarly, 0),
      rssMib,
    };
    progress(`${label}: delivered ${run.delivered} in ${run.eventChunks} chunks, p50 ${run.latency.p50.toFixed(1)} ms p99 ${run.latency.p99.toFixed(1)} ms (${run.latency.count} samples), server CPU ${cpuMs} ms (${systemMs} in the kernel), ${run.cpuUsPerDelivered.toFixed(1)} µs/delivered, ${run.closedEarly} closed early, server RSS ${rssMib.toFixed(0)} MiB; CPU ms by thread: ${threads}`);
    return run;
  } finally {
    await feed.close();
    await Promise.all(
      workers.map(async (worker) => {
        worker.send({ type: 'stop' } satisfies WorkerCommand);
        await Promise.race([new Promise((resolve) => worker.once('exit', resolve)), sleep(10_000)]);
        await stopChild(worker);
      }),
    );
  }
}

/** A seeded shuffle of the product indexes, so subscribers watch disjoint-ish random sets. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Topics for the spread reference: both sources in 500 two-letter markets ("aa" to "tf"). */
function spreadTopics(): string[] {
  const letter = (n: number): string => String.fromCharCode(97 + n);
  return Array.from({ length: SPREAD_TOPICS }, (_, k) => `price:${k % 2 === 0 ? 'marketplacea' : 'marketplaceb'}:${letter(Math.floor(k / 2 / 26))}${letter(Math.floor(k / 2) % 26)}`);
}

/** Scenarios in groups run back to back (a reference first, then what it is compared with); even rounds run a group in reverse. */
function scenarios(): Scenario[][] {
  const rnd = random(26);
  const out: Scenario[][] = [];
  const only = new Set(values.only.split(','));
  const idsSubscribers = Math.round(10_000 * scale);
  const priceSubscribers = Math.round(5_000 * scale);
  const event = (product: number, n: number, at: number, extra: object = {}) =>
    buildPriceEvent({ product_id: productId(product), variant_id: `v${n % 8}`, price: 100 + (n % 10_000) / 100, timestamp: encodeTimestamp(at), ...extra });
  const eventOnTopic = (topic: string, product: number, n: number, at: number) => {
    const [, source, market = ''] = topic.split(':');
    return event(product, n, at, { source, market: market.toUpperCase() });
  };
  if (only.has('ids')) {
    const group: Scenario[] = [];
    const filters = Array.from({ length: idsSubscribers }, () =>
      `product_id IN [${Array.from({ length: WATCHED_PER_SUBSCRIBER }, () => `"${productId(Math.floor(rnd() * PRODUCTS))}"`).join(',')}]`,
    );
    // Two references: the same deliveries in bursts (each event to every subscriber at once), and
    // in the filtered row's own pattern without a filter (each event to about 10 subscribers, each
    // subscriber one event a second): SPREAD_TOPICS topics of 10 subscribers each, drawn at random
    // as a filtered event's subscribers are (neither connected one after the other, whose objects
    // lie side by side in memory, nor in one worker process), event n on topic n mod SPREAD_TOPICS.
    // Against the first the filtered row pays for its filters and for its pattern (a write to a
    // socket whose reader sleeps costs the kernel more than one in a burst); against the second,
    // for its filters alone.
    const spread = spreadTopics();
    const places = Array.from({ length: idsSubscribers }, (_, i) => i);
    for (let i = places.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [places[i], places[j]] = [places[j]!, places[i]!];
    }
    const topics = places.map((place) => spread[Math.floor(place / 10) % spread.length]!);
    group.push({ name: 'ids unfiltered reference', subscribers: idsSubscribers, rate: 1, filters: null, sampleEvery: 10, event: (n, at) => event(n % PRODUCTS, n, at) });
    group.push({ name: 'ids unfiltered, spread over topics', subscribers: idsSubscribers, rate: 1000, filters: null, topics, sampleEvery: 10, event: (n, at) => eventOnTopic(spread[n % spread.length]!, Math.floor(rnd() * PRODUCTS), n, at) });
    group.push({ name: 'ids product_id IN 100', subscribers: idsSubscribers, rate: 1000, filters, sampleEvery: 10, event: (n, at) => event(Math.floor(rnd() * PRODUCTS), n, at) });
    out.push(group);
  }
  if (only.has('ids-control')) {
    // The same filters (each list with product 0 in place of one of its ids) in the reference's
    // delivery pattern: 1 event/s, for product 0, reaching every subscriber at once. Against the
    // reference, it prices holding and looking up the filters; against `ids`, the pattern.
    const filters = Array.from({ length: idsSubscribers }, () =>
      `product_id IN [${[productId(0), ...Array.from({ length: WATCHED_PER_SUBSCRIBER - 1 }, () => productId(Math.floor(rnd() * PRODUCTS)))].map((id) => `"${id}"`).join(',')}]`,
    );
    out.push([
      { name: 'ids unfiltered reference', subscribers: idsSubscribers, rate: 1, filters: null, sampleEvery: 10, event: (n, at) => event(n % PRODUCTS, n, at) },
      { name: 'ids control: IN 100, all match', subscribers: idsSubscribers, rate: 1, filters, sampleEvery: 10, event: (n, at) => event(0, n, at) },
    ]);
  }
  if (only.has('price')) {
    const filters = Array.from({ length: priceSubscribers }, (_, i) => `price < ${(100 + (i * 100) / priceSubscribers).toFixed(2)} AND market = "US"`);
    out.push([
      { name: 'price unfiltered reference', subscribers: priceSubscribers, rate: 100, filters: null, sampleEvery: 25, event: (n, at) => event(n % PRODUCTS, n, at) },
      { name: 'price < X AND market', subscribers: priceSubscribers, rate: 100, filters, sampleEvery: 25, event: (n, at) => event(n % PRODUCTS, n, at, { price: 100 + rnd() * 100 }) },
    ]);
  }
  return out;
}

/** The price log URL of a Redis row: `base` with the row's key prefix (open-price-log.ts reads `?prefix=`). */
function redisUrlWithPrefix(base: string, keyPrefix: string): string {
  const url = new URL(base);
  url.searchParams.set('prefix', keyPrefix);
  return url.toString();
}

/** Deletes a row's keys (its stream, counter and latest-price hashes). */
async function deleteRedisKeys(base: string, keyPrefix: string): Promise<void> {
  const redis = new Redis(base, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } catch (error) {
    progress(`could not delete the Redis keys ${keyPrefix}*: ${(error as Error).message}`);
  } finally {
    redis.disconnect();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'watch-bench-'));
  const db = `sqlite:${join(dir, 'catalog.db')}`;
  const runs: Run[] = [];
  try {
    const keyOut = await runCli(CLI, ['keys', 'create', '--db', db, '--plan', 'pro']);
    const proKey = keyOut.stdout.trim().split('\n').pop()?.trim() ?? '';
    const groups = scenarios();
    for (const log of values.logs.split(',')) {
      for (const group of groups) {
        for (let round = 1; round <= rounds; round++) {
          for (const scenario of round % 2 === 1 ? group : [...group].reverse()) {
            const keyPrefix = `watch-bench:${process.pid}:${runs.length}:`;
            const priceLogUrl = log === 'redis' ? redisUrlWithPrefix(values.redis, keyPrefix) : db;
            // A fresh server per run: no run's connections or heap weigh on the next.
            // Heartbeats every 15 s (the default) would fall inside a row's 10 s of publishing or
            // not depending on how long its subscribers took to connect (filtered ones take
            // longer), 10,000 writes more in one row than in the other: none goes out during a row.
            const server = await startServer(CLI, ['--db', db, '--price-log', priceLogUrl, '--log-level', 'warn', '--heartbeat-ms', '600000'], 120_000, cpuProfileArgs(scenario, log, round));
            try {
              runs.push(await runScenario(server, proKey, priceLogUrl, scenario, log, round));
            } finally {
              await server.stop();
              if (log === 'redis') await deleteRedisKeys(values.redis, keyPrefix);
            }
          }
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log('| scenario | log | round | subscribers (connected, closed early) | events/s | published | delivered | events per chunk | p50 ms | p99 ms | server CPU ms (kernel) | CPU µs per delivered event (user only) | server RSS MiB |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const run of runs) {
    console.log(`| ${run.scenario} | ${run.log} | ${run.round} | ${run.subscribers} (${run.connected}, ${run.closedEarly}) | ${run.rate} | ${run.published} | ${run.delivered} | ${(run.delivered / Math.max(1, run.eventChunks)).toFixed(2)} | ${run.latency.p50.toFixed(1)} | ${run.latency.p99.toFixed(1)} | ${run.cpuMs} (${run.systemMs}) | ${run.cpuUsPerDelivered.toFixed(1)} (${(((run.cpuMs - run.systemMs) * 1000) / Math.max(1, run.delivered)).toFixed(1)}) | ${run.rssMib.toFixed(0)} |`);
  }
}

await main();
