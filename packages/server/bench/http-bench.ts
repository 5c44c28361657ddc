// HTTP per operation: (a) our server, (b) a bare node:http server returning the same bytes, (c)
// Prism mocking the same spec. Targets are alternated a, b, c, a, b, c… with the same autocannon
// settings and each figure is the median over rounds, so machine noise hits all three alike.
import autocannon from 'autocannon';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordedResponse } from './lib/bare-http-server.ts';
import { get } from './lib/http-client.ts';
import { startPrism, type RunningPrism } from './lib/prism.ts';
import { forkHelper, progress, readRssKib, stopChild } from './lib/processes.ts';
import { median, ratio } from './lib/stats.ts';

export interface HttpOperation {
  /** operationId plus a qualifier when one operation is measured several ways. */
  name: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
}

export interface RoundResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export interface TargetResult extends RoundResult {
  rounds: RoundResult[];
}

export interface HttpOperationResult {
  name: string;
  path: string;
  bytes: number;
  status: number;
  server?: TargetResult;
  bare: TargetResult;
  prism?: TargetResult;
  /** rps relative to the bare server (b), and ours relative to Prism (a/c). */
  serverToBare: number;
  prismToBare: number;
  serverToPrism: number;
}

export interface HttpBenchOptions {
  operations: readonly HttpOperation[];
  /** Base URL of our server; without it the bare server replays Prism's bytes and (a) is skipped. */
  serverUrl?: string;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  rounds: number;
  notes: string[];
}

type TargetName = 'server' | 'bare' | 'prism';

async function measure(url: string, headers: Record<string, string>, connections: number, seconds: number): Promise<RoundResult> {
  const result = await autocannon({ url, headers, connections, duration: seconds, pipelining: 1, timeout: 10 });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors + result.timeouts };
}

function combine(rounds: RoundResult[]): TargetResult {
  return {
    rps: median(rounds.map((r) => r.rps)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    non2xx: rounds.reduce((sum, r) => sum + r.non2xx, 0),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
    rounds,
  };
}

export async function runHttpBench(options: HttpBenchOptions): Promise<HttpOperationResult[]> {
  let prism: RunningPrism | undefined;
  try {
    progress('starting Prism');
    prism = await startPrism();
  } catch (error) {
    options.notes.push(`http: Prism could not start (${(error as Error).message}); column (c) is empty.`);
  }
  const source = options.serverUrl ?? prism?.url;
  if (source === undefined) throw new Error('http: neither the server nor Prism is available');
  if (options.serverUrl === undefined) options.notes.push('http: the server was not available; the bare server replays Prism\'s bytes and column (a) is empty.');

  // One recorded response per operation: the bytes the bare server will replay.
  const recorded: RecordedResponse[] = [];
  for (const operation of options.operations) {
    const response = await get(source + operation.path, operation.headers);
    if (response.status !== 200) options.notes.push(`http: ${operation.name} answered ${response.status} while recording; its figures measure that response.`);
    recorded.push({ url: operation.path, status: response.status, contentType: response.contentType, body: response.body.toString('base64') });
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-http-'));
  const routesFile = join(dir, 'routes.json');
  writeFileSync(routesFile, JSON.stringify(recorded));
  const bare = await forkHelper<{ port: number }>(new URL('./lib/bare-http-server.ts', import.meta.url).pathname, [routesFile]);
  const bareUrl = `http://127.0.0.1:${bare.ready.port}`;
  progress(`bare node:http server on ${bareUrl} (pid ${bare.child.pid ?? '?'}, rss ${readRssKib(bare.child.pid ?? -1)} KiB)`);

  const bases: Partial<Record<TargetName, string>> = { bare: bareUrl };
  if (options.serverUrl !== undefined) bases.server = options.serverUrl;
  if (prism !== undefined) bases.prism = prism.url;
  const targets = (['server', 'bare', 'prism'] as const).filter((name) => bases[name] !== undefined);

  const results: HttpOperationResult[] = [];
  try {
    for (const [index, operation] of options.operations.entries()) {
      const rounds: Record<TargetName, RoundResult[]> = { server: [], bare: [], prism: [] };
      for (const target of targets) {
        progress(`http ${operation.name}: warm-up ${target} ${options.warmupSeconds}s`);
        await measure(bases[target] + operation.path, operation.headers, options.connections, options.warmupSeconds);
      }
      for (let round = 1; round <= options.rounds; round++) {
        for (const target of targets) {
          const result = await measure(bases[target] + operation.path, operation.headers, options.connections, options.durationSeconds);
          progress(`http ${operation.name} round ${round}/${options.rounds} ${target}: ${result.rps.toFixed(0)} req/s p50 ${result.p50} ms p99 ${result.p99} ms${result.non2xx > 0 ? ` non-2xx ${result.non2xx}` : ''}`);
          rounds[target].push(result);
        }
      }
      const server = rounds.server.length > 0 ? combine(rounds.server) : undefined;
      const bareResult = combine(rounds.bare);
      const prismResult = rounds.prism.length > 0 ? combine(rounds.prism) : undefined;
      const recording = recorded[index];
      results.push({
        name: operation.name,
        path: operation.path,
        bytes: recording === undefined ? 0 : Buffer.from(recording.body, 'base64').length,
        status: recording?.status ?? 0,
        ...(server === undefined ? {} : { server }),
        bare: bareResult,
        ...(prismResult === undefined ? {} : { prism: prismResult }),
        serverToBare: ratio(server?.rps, bareResult.rps),
        prismToBare: ratio(prismResult?.rps, bareResult.rps),
        serverToPrism: ratio(server?.rps, prismResult?.rps),
      });
    }
  } finally {
    await stopChild(bare.child);
    await prism?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}
