// CPU per request of the API's own work, without sockets, the kernel or a load generator: requests
// go one after another through a checkout's createApp (Express, the pipeline, the real stores) on
// an in-memory socket, and the process's CPU time is divided by their number. On a shared 2-core
// machine this is the steadiest figure for a change to the request path; the HTTP benches say what
// a client sees. Each request's answer must be 200. Reports; asserts nothing.
//
//   node bench/in-process-bench.ts --db sqlite:/tmp/catalog.db --key ck_… (--ids FILE | --paths FILE)
//       [--checkout /path/to/worktree] [--requests 20000] [--rounds 2] [--log-level info|warn] [--index-snapshots none|default]
//       [--cpu-prof DIR]   (a CPU profile per workload and round, of its requests only: not of the start or the warm-up)
//       [--document-readers N]   (SQLite: storefront documents read by N threads, as `serve` does; their CPU counts in the process's)
// --ids: one product id per line (getProduct over them, and over the first one: a cache hit);
// --paths: one request path per line (e.g. storefront listings), taken in turn; several files
// (comma-separated) are measured one after the other, a line each (bench/shapes-bench.ts
// --write-paths writes one per filter shape). --index-snapshots default loads the storefront
// index from the snapshot beside the catalog (as `catalog serve` does) instead of every row. --checkout runs
// another revision's createApp (a worktree of it, installed), for before/after figures on one
// machine; give each revision its own copy of the database when their migrations differ.
// --log-level info (the default) writes access lines through the service's logger to /dev/null.
import http from 'node:http';
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { basename, join } from 'node:path';
import { Duplex } from 'node:stream';
import { parseArgs } from 'node:util';
import { SERVER_DIR } from './lib/processes.ts';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    key: { type: 'string' },
    ids: { type: 'string' },
    paths: { type: 'string' },
    checkout: { type: 'string' },
    requests: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '2' },
    'log-level': { type: 'string', default: 'info' },
    'index-snapshots': { type: 'string', default: 'none' },
    'cpu-prof': { type: 'string' },
    'document-readers': { type: 'string', default: '0' },
  },
});
if (values.db === undefined || values.key === undefined || (values.ids === undefined) === (values.paths === undefined)) {
  throw new Error('usage: --db URL --key KEY (--ids FILE | --paths FILE) [--checkout DIR] [--requests N] [--rounds N] [--log-level info|warn]');
}
const server = values.checkout === undefined ? SERVER_DIR : join(values.checkout, 'packages/server');
const requests = Number(values.requests);
const key = values.key;

// Another revision's modules, by path: their shapes are that revision's, so they are typed loosely.
type Module = Record<string, (...args: never[]) => unknown>;
const load = async (file: string): Promise<Module> => (await import(join(server, file))) as Module;
const { createApp } = await load('src/app.ts');
const { testAppDeps } = await load('test/support/app-deps.ts');
const { silentLogger, createServiceLogger } = await load('src/logger.ts');
const { openCatalogStores } = await load('src/store/open-store.ts');
const shell = await load('src/http/express-shell.ts').catch(() => ({}) as Module);

const logger = values['log-level'] === 'info' ? createServiceLogger!('info' as never, { terminal: false, fd: openSync('/dev/null', 'w') } as never) : silentLogger;
const stores = (await openCatalogStores!(values.db as never, silentLogger as never, { indexSnapshotDir: values['index-snapshots'], documentReaders: Number(values['document-readers']) } as never)) as {
  catalog: { warm?: () => Promise<unknown> };
  keys: unknown;
};
await stores.catalog.warm?.();
const app = createApp!(testAppDeps!({ catalog: stores.catalog, keys: stores.keys, logger } as never) as never) as http.RequestListener;
// The request and response classes the checkout's server is made with (serverOptionsFor), when it has them.
const options = (shell['serverOptionsFor']?.(app as never) ?? {}) as http.ServerOptions;
const Request = (options.IncomingMessage ?? http.IncomingMessage) as typeof http.IncomingMessage;
const Response = (options.ServerResponse ?? http.ServerResponse) as typeof http.ServerResponse;

class NullSocket extends Duplex {
  override _read(): void {}
  override _write(_chunk: unknown, _encoding: BufferEncoding, done: () => void): void {
    done();
  }
  override _writev(_chunks: unknown, done: () => void): void {
    done();
  }
}
const socket = Object.assign(new NullSocket(), { remoteAddress: '127.0.0.1', encrypted: false }) as unknown as import('node:net').Socket;

const linesOf = (file: string): string[] => readFileSync(file, 'utf8').trim().split('\n');
const pathFiles = values.paths?.split(',') ?? [];
const paths = values.ids === undefined ? pathFiles.flatMap(linesOf) : linesOf(values.ids).map((id) => `/v2/products/${id}`);

function send(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = new Request(socket);
    Object.assign(req, { method: 'GET', url: path, headers: { host: 'bench', authorization: key }, rawHeaders: ['host', 'bench', 'authorization', key] });
    Object.assign(req, { httpVersionMajor: 1, httpVersionMinor: 1, httpVersion: '1.1', complete: true });
    req.push(null);
    const res = new Response(req);
    res.shouldKeepAlive = true;
    res.assignSocket(socket);
    res.on('finish', () => {
      res.detachSocket(socket);
      if (res.statusCode === 200) resolve();
      else reject(new Error(`${path} answered ${res.statusCode}`));
    });
    app(req, res);
  });
}

/** `count` requests from `pick`, each on a turn of its own (work the server does between requests runs). */
async function run(count: number, pick: (at: number) => string): Promise<{ cpu: number; thread: number; wall: number }> {
  const cpuBefore = process.cpuUsage();
  const threadBefore = process.threadCpuUsage();
  const started = performance.now();
  for (let at = 0; at < count; at += 1) {
    await send(pick(at));
    await new Promise(setImmediate);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const thread = process.threadCpuUsage(threadBefore);
  return { cpu: (cpu.user + cpu.system) / count, thread: (thread.user + thread.system) / count, wall: ((performance.now() - started) * 1000) / count };
}

/** Each call the next of `list`'s paths, in turn. */
const inTurn = (list: readonly string[]): (() => string) => {
  let next = 0;
  return () => list[next++ % list.length]!;
};
// The warm-up takes paths from the end, so that the rounds' first paths are not cache hits.
await run(Math.min(requests, 5_000), inTurn(paths.toReversed()));
const workloads =
  values.ids === undefined
    ? pathFiles.map((file) => {
        const list = linesOf(file);
        return { name: `${file.split('/').pop()}, ${list.length} distinct`, pick: inTurn(list) };
      })
    : [
        { name: `getProduct, ${paths.length} distinct`, pick: inTurn(paths) },
        { name: 'getProduct, one id (cache hit)', pick: () => paths[0]! },
      ];
console.log(`${server}; ${requests} requests per round; log level ${values['log-level']}`);
const profiles = values['cpu-prof'];
const profiler = profiles === undefined ? undefined : new Session();
if (profiler !== undefined) {
  mkdirSync(profiles!, { recursive: true });
  profiler.connect();
  await profiler.post('Profiler.enable');
}
for (let round = 1; round <= Number(values.rounds); round += 1) {
  for (const [at, workload] of workloads.entries()) {
    await profiler?.post('Profiler.start');
    const { cpu, thread, wall } = await run(requests, workload.pick);
    if (profiler !== undefined) {
      const name = `${basename(pathFiles[at] ?? 'getProduct')}.${at}.round-${round}.cpuprofile`;
      writeFileSync(join(profiles!, name), JSON.stringify((await profiler.post('Profiler.stop')).profile));
    }
    console.log(`round ${round}  ${workload.name.padEnd(36)} ${cpu.toFixed(1)} µs CPU per request (${thread.toFixed(1)} on the API thread), ${wall.toFixed(1)} µs wall`);
  }
}
process.exit(0);
