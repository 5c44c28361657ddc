// Price monitors under load (issue 51), black box, on each engine: the SQLite catalog with the
// SQLite price log, and PostgreSQL with the Redis price log. Per engine, one `catalog serve`
// through three phases of `--duration` seconds each, with `--rate` events/s published through
// `catalog prices publish -` and a light getProduct load (`--api-rate` requests/s, distinct
// products, open loop) throughout:
//   A. no monitors;
//   B. `--monitors` monitors (each `product_id IN [...]` of `--watched` products drawn from the
//      seeded catalog's), minimum change 0 % and no minimum interval, so every matching event is a
//      change; spread over `--ports` receiver endpoints in `--receivers` processes
//      (monitors/webhook-receivers.ts) that answer 204 at once; after publishing stops, the rest
//      is drained;
//   C. the monitors' key revoked (a revoked key's monitors stop): the API alone again.
// Reported: publish-to-receive latency per change (the event's `timestamp` is the publish
// instant), deliveries and changes per second, repeats and order, the server's CPU per delivery
// (/proc/<pid>/stat; phase B's total, and B minus A: what the monitors added), and the API's
// p50/p99 in each phase. The monitors are added through the store's API from this process
// (`MonitorStore.addMonitor`, what `catalog monitors add` calls, with the log's newest id as the
// CLI gives): the CLI would start a process per monitor.
//
//   node bench/monitors-bench.ts [--engines sqlite,postgres] [--duration S] [--products N]
//        [--monitors N] [--watched N] [--rate R] [--api-rate R] [--ports N] [--receivers N]
//        [--postgres URL] [--redis URL] [--cpu-prof DIR] [--cli PATH]
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { ChildProcess } from 'node:child_process';
import { silentLogger } from '../src/logger.ts';
import { openPriceLog } from '../src/prices/open-price-log.ts';
import { openCatalogStores } from '../src/store/open-store.ts';
import type { CatalogVariant } from '../src/catalog/model.ts';
import { childEnv, forkHelper, progress, runCli, SERVER_DIR, sleep, startServer, stopChild, type RunningServer } from './lib/processes.ts';
import { summarize, type LatencySummary } from './lib/stats.ts';
import { encodeTimestamp, wallClockMs } from './stream/price-events.ts';
import type { ReceiverCommand, ReceiverReply } from './monitors/webhook-receivers.ts';

const { values } = parseArgs({
  options: {
    engines: { type: 'string', default: 'sqlite,postgres' },
    duration: { type: 'string', default: '20' },
    products: { type: 'string', default: '100000' },
    monitors: { type: 'string', default: '10000' },
    watched: { type: 'string', default: '100' },
    rate: { type: 'string', default: '1000' },
    'api-rate': { type: 'string', default: '100' },
    ports: { type: 'string', default: '64' },
    receivers: { type: 'string', default: '2' },
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379/14' },
    'drain-timeout': { type: 'string', default: '60' },
    'cpu-prof': { type: 'string' },
    cli: { type: 'string' },
  },
});
const CLI = values.cli ?? join(SERVER_DIR, 'src/cli/main.ts');
const seconds = Number(values.duration);
const rate = Number(values.rate);
const apiRate = Number(values['api-rate']);
const monitorCount = Number(values.monitors);
const watched = Number(values.watched);

interface Phase {
  name: string;
  published: number;
  cpuMs: number;
  api: LatencySummary & { errors: number };
}

interface MonitorPhase extends Phase {
  deliveries: number;
  changes: number;
  repeats: number;
  outOfOrder: number;
  /** PostgreSQL's backends for this database over the phase and its drain (0 for SQLite, whose work is in the server's process). */
  databaseCpuMs: number;
  /** Deliveries that said `reset`: events the monitor's reader had not read were gone from the log. */
  resets: number;
  latency: LatencySummary;
  /** Per delivery, from its forming to its receipt. */
  sinceFormed: LatencySummary;
  /** From the end of publishing until the receivers were quiet (or the drain timeout). */
  drainMs: number;
  backlogAfter: number;
}

interface EngineRun {
  engine: string;
  products: number;
  a: Phase;
  b: MonitorPhase;
  c: Phase;
  rssMib: number;
  /** SQLite's write-ahead log after phase B and after phase C, MiB (NaN for PostgreSQL). */
  walMib: [number, number];
}

/** The process's CPU time, user plus kernel, ms (clock ticks of 10 ms); 0 once it is gone. */
function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * CPU ms of the PostgreSQL backends connected to `database` (the server's pool and this bench's
 * store), by pid, so a phase's share is what ended minus what began; empty for SQLite.
 */
async function backendCpuMs(databaseUrl: string): Promise<Map<number, number>> {
  if (!databaseUrl.startsWith('postgres')) return new Map();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return new Map(rows.map((row) => [row.pid, cpuMsOf(row.pid)]));
  } finally {
    await client.end();
  }
}

function backendCpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

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

function walMibOf(db: string): number {
  if (!db.startsWith('sqlite:')) return Number.NaN;
  try {
    return statSync(`${db.slice('sqlite:'.length)}-wal`).size / 2 ** 20;
  } catch {
    return 0;
  }
}

function rssMibOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? Number.NaN) / 1024;
}

function ask<T extends ReceiverReply['type']>(child: ChildProcess, command: ReceiverCommand, type: T): Promise<Extract<ReceiverReply, { type: T }>> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown): void => {
      if ((message as ReceiverReply).type !== type) return;
      child.off('message', onMessage);
      resolve(message as Extract<ReceiverReply, { type: T }>);
    };
    child.on('message', onMessage);
    child.send(command);
  });
}

/** `catalog prices publish -` fed NDJSON, `rate` events/s in 10 ms ticks, each stamped with its publish instant. */
function publisher(priceLogUrl: string): { run(event: (n: number, at: string) => object, forSeconds: number): Promise<number>; close(): Promise<void> } {
  const child = spawn(process.execPath, [CLI, 'prices', 'publish', '--price-log', priceLogUrl, '-'], { cwd: SERVER_DIR, env: childEnv(), stdio: ['pipe', 'ignore', 'inherit'] });
  child.stdin.on('error', () => {});
  let sequence = 0;
  return {
    run: (event, forSeconds) =>
      new Promise<number>((resolve) => {
        const first = sequence;
        const startedAt = wallClockMs();
        const timer = setInterval(() => {
          const elapsed = wallClockMs() - startedAt;
          const due = first + Math.min(Math.floor((elapsed / 1000) * rate), forSeconds * rate);
          const lines: string[] = [];
          while (sequence < due) lines.push(`${JSON.stringify(event(++sequence, encodeTimestamp(wallClockMs())))}\n`);
          if (lines.length > 0) child.stdin.write(lines.join(''));
          if (elapsed >= forSeconds * 1000) {
            clearInterval(timer);
            resolve(sequence - first);
          }
        }, 10);
      }),
    close: async () => {
      const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
      child.stdin.end();
      await exited;
    },
  };
}

/** getProduct on distinct products, `apiRate` requests/s in 10 ms ticks (open loop), until `signal`. */
async function apiLoad(apiUrl: string, key: string, productIds: readonly string[], signal: AbortSignal): Promise<LatencySummary & { errors: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const samples: number[] = [];
  let errors = 0;
  let sent = 0;
  const pending = new Set<Promise<void>>();
  const one = (id: string): Promise<void> =>
    new Promise((resolve) => {
      const start = performance.now();
      const req = request(`${apiUrl}/v2/products/${id}`, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) samples.push(performance.now() - start);
          else errors += 1;
          resolve();
        });
      });
      req.on('error', () => {
        errors += 1;
        resolve();
      });
      req.end();
    });
  const startedAt = performance.now();
  while (!signal.aborted) {
    const due = Math.floor(((performance.now() - startedAt) / 1000) * apiRate);
    while (sent < due) {
      const request = one(productIds[(sent * 7919) % productIds.length]!);
      sent += 1;
      pending.add(request);
      void request.finally(() => pending.delete(request));
    }
    await sleep(10);
  }
  await Promise.all(pending);
  agent.destroy();
  return { ...summarize(samples), errors };
}

/** A seeded PRNG (mulberry32): the same monitors on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface EngineSetup {
  name: string;
  db: string;
  priceLog: string;
  cleanup(): Promise<void>;
}

async function setUp(engine: string, dir: string): Promise<EngineSetup> {
  if (engine === 'sqlite') {
    const db = `sqlite:${join(dir, 'catalog.db')}`;
    return { name: 'SQLite catalog + SQLite price log', db, priceLog: db, cleanup: async () => {} };
  }
  const name = `catalog_monitors_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: `${values.postgres}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const prefix = `monitors-bench:${process.pid}:`;
  const priceLog = new URL(values.redis);
  priceLog.searchParams.set('prefix', prefix);
  return {
    name: 'PostgreSQL catalog + Redis price log',
    db: `${values.postgres}/${name}`,
    priceLog: priceLog.toString(),
    cleanup: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
      const redis = new Redis(values.redis);
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.unlink(...keys);
      } while (cursor !== '0');
      redis.disconnect();
    },
  };
}

async function runEngine(engine: string, dir: string): Promise<EngineRun> {
  const setup = await setUp(engine, dir);
  const receivers: ChildProcess[] = [];
  let server: RunningServer | undefined;
  let feed: ReturnType<typeof publisher> | undefined;
  try {
    progress(`${engine}: seeding ${values.products} products`);
    await runCli(CLI, ['seed', '--db', setup.db, '--products', values.products]);
    const createKey = async (label: string): Promise<string> => (await runCli(CLI, ['keys', 'create', '--db', setup.db, '--plan', 'pro', '--label', label])).stdout.trim().split('\n').pop()!.trim();
    const apiKey = await createKey('api load');
    const monitorKey = await createKey('monitors');

    const stores = await openCatalogStores(setup.db, silentLogger);
    let variants: CatalogVariant[];
    try {
      variants = await stores.catalog.sampleVariants(Number(values.products) * 2);
    } finally {
      await stores.close();
    }
    const productIds = [...new Set(variants.map((variant) => variant.product_id))];
    progress(`${engine}: ${variants.length} variants of ${productIds.length} products sampled`);

    const portsPerReceiver = Math.ceil(Number(values.ports) / Number(values.receivers));
    const ports: number[] = [];
    for (let r = 0; r < Number(values.receivers); r++) {
      const { child, ready } = await forkHelper<ReceiverReply>(new URL('./monitors/webhook-receivers.ts', import.meta.url).pathname, ['--ports', String(portsPerReceiver)]);
      receivers.push(child);
      if (ready.type === 'ready') ports.push(...ready.ports);
    }
    const askAll = <T extends ReceiverReply['type']>(command: ReceiverCommand, type: T) => Promise.all(receivers.map((child) => ask(child, command, type)));

    const profile = values['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', join(values['cpu-prof'], engine)];
    server = await startServer(CLI, ['--db', setup.db, '--price-log', setup.priceLog, '--log-level', 'warn', '--monitor-private-endpoints', 'allow', '--rate-limit', '0'], 180_000, profile);
    feed = publisher(setup.priceLog);
    const rnd = random(51);
    const event = (n: number, at: string): object => {
      const variant = variants[Math.floor(rnd() * variants.length)]!;
      return {
        source: n % 2 === 0 ? 'marketplacea' : 'marketplaceb',
        product_id: variant.product_id,
        variant_id: variant.id,
        size: variant.size,
        price: Math.round((50 + rnd() * 200) * 100) / 100,
        currency: 'USD',
        market: 'US',
        sku: variant.sku,
        timestamp: at,
      };
    };
    const running = server;
    const publishing = feed;

    const phase = async (name: string): Promise<Phase & { threads: string }> => {
      const stop = new AbortController();
      const cpuBefore = cpuMsOf(running.pid);
      const threadsBefore = cpuMsByThread(running.pid);
      const load = apiLoad(running.apiUrl, apiKey, productIds, stop.signal);
      const published = await publishing.run(event, seconds);
      stop.abort();
      const api = await load;
      const cpuMs = cpuMsOf(running.pid) - cpuBefore;
      const threads = [...cpuMsByThread(running.pid)].map(([thread, ms]) => `${thread} ${ms - (threadsBefore.get(thread) ?? 0)}`).join(', ');
      progress(`${engine} ${name}: published ${published}, API p50 ${api.p50.toFixed(2)} ms p99 ${api.p99.toFixed(2)} ms (${api.count} ok, ${api.errors} errors), server CPU ${cpuMs} ms; by thread: ${threads}`);
      return { name, published, cpuMs, api, threads };
    };

    // Warm-up: the first requests and appends of a fresh process.
    await phase('warm-up');
    const a = await phase('A: no monitors');

    progress(`${engine}: adding ${monitorCount} monitors`);
    const admin = await openCatalogStores(setup.db, silentLogger);
    const log = await openPriceLog(setup.priceLog, silentLogger);
    try {
      const newest = (await log.bounds())?.newestId ?? 0;
      const started = performance.now();
      for (let m = 0; m < monitorCount; m++) {
        const ids = new Set<string>();
        while (ids.size < Math.min(watched, productIds.length)) ids.add(productIds[Math.floor(rnd() * productIds.length)]!);
        await admin.monitors.addMonitor(
          monitorKey,
          { url: `http://127.0.0.1:${ports[m % ports.length]!}/hooks/${m}`, filter: `product_id IN [${[...ids].map((id) => `"${id}"`).join(',')}]`, minChangePercent: 0, minIntervalMs: 0 },
          newest,
        );
      }
      progress(`${engine}: ${monitorCount} monitors added in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } finally {
      await log.close();
    }

    await askAll({ type: 'reset' }, 'reset');
    const publishedAt = performance.now();
    const cpuBeforeB = cpuMsOf(running.pid);
    const backendsBeforeB = await backendCpuMs(setup.db);
    const b = await phase('B: monitors');
    const drainStart = performance.now();
    let last = -1;
    for (let quiet = 0; quiet < 8 && performance.now() - drainStart < Number(values['drain-timeout']) * 1000; ) {
      await sleep(250);
      const now = (await askAll({ type: 'count' }, 'count')).reduce((total, reply) => total + reply.deliveries, 0);
      quiet = now === last ? quiet + 1 : 0;
      last = now;
      // Quiet receivers with changes still stored: the sender is holding back while the reader catches up.
      if (quiet === 8 && (await admin.monitors.deliveryTotals()).backlog > 0) quiet = 0;
    }
    const drainMs = performance.now() - drainStart - 2000;
    const cpuAfterDrain = cpuMsOf(running.pid);
    const databaseCpuMs = backendCpuSince(backendsBeforeB, await backendCpuMs(setup.db));
    const totals = await admin.monitors.deliveryTotals();
    const reports = await askAll({ type: 'report' }, 'report');
    const deliveries = reports.reduce((total, report) => total + report.deliveries, 0);
    const changes = reports.reduce((total, report) => total + report.changes, 0);
    const latency = summarize(reports.flatMap((report) => report.latencies));
    const monitorPhase: MonitorPhase = {
      ...b,
      // CPU through the drain: the deliveries it made are counted too.
      cpuMs: cpuAfterDrain - cpuBeforeB,
      databaseCpuMs,
      deliveries,
      changes,
      repeats: reports.reduce((total, report) => total + report.repeats, 0),
      outOfOrder: reports.reduce((total, report) => total + report.outOfOrder, 0),
      resets: reports.reduce((total, report) => total + report.resets, 0),
      latency,
      sinceFormed: summarize(reports.flatMap((report) => report.sinceFormed)),
      drainMs,
      backlogAfter: totals.backlog,
    };
    progress(
      `${engine} B: ${deliveries} deliveries (${changes} changes) in ${((performance.now() - publishedAt) / 1000).toFixed(1)} s, latency p50 ${latency.p50.toFixed(0)} ms p99 ${latency.p99.toFixed(0)} ms max ${latency.max.toFixed(0)} ms (formed to received p50 ${monitorPhase.sinceFormed.p50.toFixed(0)} ms p99 ${monitorPhase.sinceFormed.p99.toFixed(0)} ms), drain ${drainMs.toFixed(0)} ms, backlog after ${totals.backlog}, repeats ${monitorPhase.repeats}, out of order ${monitorPhase.outOfOrder}, resets ${monitorPhase.resets}, PostgreSQL backends' CPU ${databaseCpuMs} ms`,
    );
    await admin.close();

    const walAfterB = walMibOf(setup.db);
    await runCli(CLI, ['keys', 'revoke', '--db', setup.db, monitorKey]);
    await sleep(2000);
    const c = await phase('C: monitors\' key revoked');
    return { engine: setup.name, products: productIds.length, a, b: monitorPhase, c, rssMib: rssMibOf(running.pid), walMib: [walAfterB, walMibOf(setup.db)] };
  } finally {
    await feed?.close();
    await server?.stop();
    for (const child of receivers) await stopChild(child);
    await setup.cleanup();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'monitors-bench-'));
const runs: EngineRun[] = [];
try {
  for (const engine of values.engines.split(',')) runs.push(await runEngine(engine, dir));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 0) : '–');
console.log(`${monitorCount} monitors × ${watched} products each, ${rate} events/s for ${seconds} s per phase, getProduct at ${apiRate}/s, ${values.ports} receiver endpoints\n`);
console.log('| engine | deliveries/s | changes/s | changes per delivery | p50 ms | p99 ms | max ms | formed → received p50 / p99 ms | drain ms | backlog after | repeats | out of order | resets | server CPU µs per delivery (B) | (B − A) per delivery | PostgreSQL CPU µs per delivery | RSS MiB | SQLite WAL MiB after B, C |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const run of runs) {
  const span = seconds + run.b.drainMs / 1000;
  // Phase A's CPU per second over phase B's span: what the same publishing and API load cost without monitors.
  const monitorsCpuMs = run.b.cpuMs - (run.a.cpuMs / seconds) * span;
  console.log(
    `| ${run.engine} | ${(run.b.deliveries / span).toFixed(0)} | ${(run.b.changes / span).toFixed(0)} | ${(run.b.changes / Math.max(1, run.b.deliveries)).toFixed(2)} | ${ms(run.b.latency.p50)} | ${ms(run.b.latency.p99)} | ${ms(run.b.latency.max)} | ${ms(run.b.sinceFormed.p50)} / ${ms(run.b.sinceFormed.p99)} | ${run.b.drainMs.toFixed(0)} | ${run.b.backlogAfter} | ${run.b.repeats} | ${run.b.outOfOrder} | ${run.b.resets} | ${((run.b.cpuMs * 1000) / Math.max(1, run.b.deliveries)).toFixed(0)} | ${((monitorsCpuMs * 1000) / Math.max(1, run.b.deliveries)).toFixed(0)} | ${run.b.databaseCpuMs === 0 ? '–' : ((run.b.databaseCpuMs * 1000) / Math.max(1, run.b.deliveries)).toFixed(0)} | ${run.rssMib.toFixed(0)} | ${run.walMib.map((mib) => (Number.isNaN(mib) ? '–' : mib.toFixed(0))).join(', ')} |`,
  );
}
console.log('\n| engine | phase | events published | server CPU ms | getProduct p50 ms | p99 ms | requests (errors) |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const run of runs) {
  for (const phase of [run.a, run.b, run.c]) console.log(`| ${run.engine} | ${phase.name} | ${phase.published} | ${phase.cpuMs} | ${ms(phase.api.p50)} | ${ms(phase.api.p99)} | ${phase.api.count} (${phase.api.errors}) |`);
}
