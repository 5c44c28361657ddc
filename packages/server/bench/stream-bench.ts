// Stream fan-out: N subscribers on one topic while a publisher sends R events/s, for the bare
// broadcaster, the server with its embedded (SQLite) price log, and the server through Redis, one
// after the other for each scenario. Subscribers live in a forked worker; the publisher is this
// process writing NDJSON into `prices publish -` (or into the broadcaster's stdin), stamping the
// publish instant into each event's `timestamp`.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import type { Writable } from 'node:stream';
import { childEnv, forkHelper, progress, readRssKib, SERVER_DIR, sleep, startServer, stopChild, type RunningServer } from './lib/processes.ts';
import { median, summarize, type LatencySummary } from './lib/stats.ts';
import { BENCH_TOPIC, benchPriceEvent, wallClockMs } from './stream/price-events.ts';
import type { WorkerCommand, WorkerReply } from './stream/subscriber-worker.ts';

export type StreamTargetName = 'bare' | 'sqlite' | 'redis';

/**
 * The scale scenario run besides the subscribers × rates grid: 10,000 subscribers on one topic at
 * 10 events/s. Goals (reported, never asserted): delivery at least 0.95 × the bare broadcaster's,
 * at most 20 KiB of server memory per connection.
 */
export const SCALE_SCENARIO = { subscribers: 10_000, rate: 10 } as const;

export interface StreamRun {
  target: StreamTargetName;
  subscribers: number;
  rate: number;
  connected: number;
  failed: number;
  closedEarly: number;
  published: number;
  /** Events received over all subscribers, and what full delivery would have been. */
  delivered: number;
  expected: number;
  deliveredPerSecond: number;
  latency: LatencySummary;
  rssBeforeKib: number;
  rssAfterKib: number;
  /** RSS growth per connected subscriber once connected (idle), and during the run (loaded: the median of samples every 0.5 s). */
  kibPerConnection: number;
  rssLoadedKib: number;
  kibPerConnectionLoaded: number;
  note?: string;
}

export interface StreamBenchOptions {
  cli: string;
  /** The seeded catalog (for keys); without it only the bare broadcaster runs. */
  catalog?: { dbFile: string; proKey: string };
  redisUrl: string;
  scenarios: readonly { subscribers: number; rate: number }[];
  durationSeconds: number;
  notes: string[];
}

interface StreamTarget {
  name: StreamTargetName;
  url: string;
  pid: number;
  headers: Record<string, string>;
  /** A fresh publisher per run, so a stuck pipe never leaks into the next scenario. */
  openPublisher(): Publisher;
  stop(): Promise<void>;
}

interface Publisher {
  input: Writable;
  close(): Promise<void>;
}

async function startBare(): Promise<StreamTarget> {
  const script = new URL('./stream/bare-broadcaster.ts', import.meta.url).pathname;
  const { child, ready } = await forkHelper<{ port: number }>(script, [], ['pipe', 'inherit', 'inherit', 'ipc']);
  const stdin = child.stdin;
  if (stdin === null) throw new Error('broadcaster has no stdin');
  return {
    name: 'bare',
    url: `http://127.0.0.1:${ready.port}/v1/stream`,
    pid: child.pid ?? -1,
    headers: { topics: BENCH_TOPIC },
    // The broadcaster reads stdin for its whole life: closing a run must not end it.
    openPublisher: () => ({ input: stdin, close: async () => {} }),
    stop: () => stopChild(child),
  };
}

function cliPublisher(cli: string, priceLogUrl: string): Publisher {
  const child: ChildProcess = spawn(process.execPath, [cli, 'prices', 'publish', '--price-log', priceLogUrl, '-'], {
    cwd: SERVER_DIR,
    env: childEnv(),
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  const input = child.stdin;
  if (input === null) throw new Error('prices publish has no stdin');
  input.on('error', () => {});
  return {
    input,
    close: async () => {
      const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
      input.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function startServerTarget(name: 'sqlite' | 'redis', options: StreamBenchOptions, catalog: { dbFile: string; proKey: string }): Promise<StreamTarget> {
  const priceLogUrl = name === 'redis' ? options.redisUrl : `sqlite:${catalog.dbFile}`;
  const server: RunningServer = await startServer(options.cli, [
    '--db', `sqlite:${catalog.dbFile}`, '--price-log', priceLogUrl, '--log-level', 'warn',
  ]);
  return {
    name,
    url: `${server.streamUrl}/v1/stream`,
    pid: server.pid,
    headers: { authorization: `Bearer ${catalog.proKey}`, topics: BENCH_TOPIC },
    openPublisher: () => cliPublisher(options.cli, priceLogUrl),
    stop: () => server.stop(),
  };
}

async function redisReachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Sends a command and waits for the worker's reply of the same type. */
function ask<T extends WorkerReply['type']>(worker: ChildProcess, command: WorkerCommand, type: T, timeoutMs = 300_000): Promise<Extract<WorkerReply, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`subscriber worker did not answer ${command.type} in ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (message: unknown): void => {
      if ((message as WorkerReply).type !== type) return;
      clearTimeout(timer);
      worker.off('message', onMessage);
      resolve(message as Extract<WorkerReply, { type: T }>);
    };
    worker.on('message', onMessage);
    worker.send(command);
  });
}

async function runOne(target: StreamTarget, subscribers: number, rate: number, durationSeconds: number): Promise<StreamRun> {
  const label = `stream ${target.name} ${subscribers} subs × ${rate}/s`;
  const rssBeforeKib = readRssKib(target.pid);
  const { child: worker } = await forkHelper<WorkerReply>(new URL('./stream/subscriber-worker.ts', import.meta.url).pathname);
  const sampleEvery = Math.max(1, Math.floor(subscribers / 200));
  let publisher: Publisher | undefined;
  try {
    const connected = await ask(worker, { type: 'start', url: target.url, headers: target.headers, count: subscribers, sampleEvery, concurrency: 100 }, 'connected');
    progress(`${label}: ${connected.connected} connected, ${connected.failed} failed in ${connected.ms.toFixed(0)} ms ${JSON.stringify(connected.statuses)}`);
    await sleep(1000);
    const rssAfterKib = readRssKib(target.pid);
    const base = {
      target: target.name, subscribers, rate, connected: connected.connected, failed: connected.failed,
      rssBeforeKib, rssAfterKib, kibPerConnection: connected.connected > 0 ? (rssAfterKib - rssBeforeKib) / connected.connected : Number.NaN,
    };
    const empty = { rssLoadedKib: Number.NaN, kibPerConnectionLoaded: Number.NaN, closedEarly: 0, published: 0, delivered: 0, expected: 0, deliveredPerSecond: Number.NaN, latency: summarize([]) };
    if (connected.connected === 0) return { ...base, ...empty, note: `no subscriber connected (${JSON.stringify(connected.statuses)})` };

    publisher = target.openPublisher();
    const input = publisher.input;
    let sequence = 0;
    const publish = (): void => {
      input.write(`${JSON.stringify(benchPriceEvent(++sequence, wallClockMs()))}\n`);
    };
    // One event end to end proves the pipeline before anything is measured.
    publish();
    const warmDeadline = Date.now() + 20_000;
    let warm = await ask(worker, { type: 'count' }, 'count');
    while (warm.events < connected.connected && Date.now() < warmDeadline) {
      await sleep(100);
      warm = await ask(worker, { type: 'count' }, 'count');
    }
    if (warm.events === 0) return { ...base, ...empty, note: 'the warm-up event never arrived within 20 s' };
    await ask(worker, { type: 'reset' }, 'reset');

    const publishedBefore = sequence;
    const startedAt = wallClockMs();
    const durationMs = durationSeconds * 1000;
    // Catch-up pacing: each tick publishes whatever the schedule owes, so timer jitter does not change the rate.
    // RSS under load is sampled every half second and reported as the median: one sample lands
    // anywhere in the garbage collector's cycle (25 to 124 KiB per connection in four equal runs).
    const rssSamples: number[] = [];
    let nextRssSampleAt = startedAt + 500;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const elapsed = wallClockMs() - startedAt;
        if (wallClockMs() >= nextRssSampleAt) {
          rssSamples.push(readRssKib(target.pid));
          nextRssSampleAt += 500;
        }
        const due = Math.min(Math.floor((elapsed / 1000) * rate), Math.floor(durationSeconds * rate));
        while (sequence - publishedBefore < due) publish();
        if (elapsed >= durationMs) {
          clearInterval(timer);
          resolve();
        }
      }, Math.min(10, 1000 / rate));
    });
    const published = sequence - publishedBefore;
    const expected = published * connected.connected;
    const drainDeadline = Date.now() + 10_000;
    let counted = await ask(worker, { type: 'count' }, 'count');
    while (counted.events < expected && Date.now() < drainDeadline) {
      await sleep(250);
      counted = await ask(worker, { type: 'count' }, 'count');
    }
    const report = await ask(worker, { type: 'report' }, 'report');
    const rssLoadedKib = rssSamples.length > 0 ? median(rssSamples) : readRssKib(target.pid);
    const seconds = Math.max(durationSeconds, (report.lastAt - startedAt) / 1000);
    const run: StreamRun = {
      ...base,
      rssLoadedKib,
      kibPerConnectionLoaded: (rssLoadedKib - rssBeforeKib) / connected.connected,
      closedEarly: report.closedEarly,
      published,
      delivered: report.events,
      expected,
      deliveredPerSecond: report.events / seconds,
      latency: summarize(report.latencies),
    };
    progress(`${label}: delivered ${run.delivered}/${expected} (${run.deliveredPerSecond.toFixed(0)}/s) p50 ${run.latency.p50.toFixed(1)} ms p99 ${run.latency.p99.toFixed(1)} ms, ${run.kibPerConnection.toFixed(1)} KiB/conn idle, ${run.kibPerConnectionLoaded.toFixed(1)} loaded`);
    return run;
  } finally {
    await publisher?.close();
    const exited = new Promise<void>((resolve) => (worker.exitCode !== null ? resolve() : worker.once('exit', () => resolve())));
    worker.send({ type: 'stop' } satisfies WorkerCommand);
    await Promise.race([exited, sleep(10_000)]);
    await stopChild(worker);
  }
}

/**
 * Each target is started afresh for each scenario, so its RSS before subscribers connect is a
 * clean baseline rather than what the previous scenario's heap left behind.
 */
export async function runStreamBench(options: StreamBenchOptions): Promise<StreamRun[]> {
  const kinds: StreamTargetName[] = ['bare'];
  if (options.catalog === undefined) {
    options.notes.push('stream: no seeded catalog or key, so only the bare broadcaster ran.');
  } else {
    kinds.push('sqlite');
    if (await redisReachable(options.redisUrl)) kinds.push('redis');
    else options.notes.push(`stream: Redis at ${options.redisUrl} is not reachable; the Redis rows are missing.`);
  }
  const failedToStart = new Set<StreamTargetName>();
  const runs: StreamRun[] = [];
  for (const scenario of options.scenarios) {
    for (const kind of kinds) {
      if (failedToStart.has(kind)) continue;
      let target: StreamTarget;
      try {
        target = kind === 'bare' || options.catalog === undefined ? await startBare() : await startServerTarget(kind, options, options.catalog);
      } catch (error) {
        failedToStart.add(kind);
        options.notes.push(`stream: the ${kind} target did not start: ${(error as Error).message}`);
        continue;
      }
      try {
        runs.push(await runOne(target, scenario.subscribers, scenario.rate, options.durationSeconds));
      } catch (error) {
        options.notes.push(`stream: ${kind} ${scenario.subscribers}×${scenario.rate}/s failed: ${(error as Error).message}`);
      } finally {
        await target.stop();
      }
    }
  }
  if (runs.some((run) => run.target === 'redis')) {
    options.notes.push(`stream: the Redis rows use ${options.redisUrl} (a separate Redis database rather than a key prefix); the events published there stay in that log.`);
  }
  return runs;
}
