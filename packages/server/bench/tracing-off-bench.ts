// "Free when off" (issue 49): the same Express app, each in its own process, (a) with the tracing
// module never imported, (b) with it imported, `startTracing()` answered off and the request-id
// hook called on every request, as the service wires it, and (c) tracing on, spans discarded
// (what switching it on costs the request path, before any exporter). Rounds alternate the
// targets so a noisy machine affects all alike; figures are medians over rounds. Reports, never asserts.
//   node bench/tracing-off-bench.ts [--seconds 10] [--rounds 2] [--connections 50] [--modes absent,off,on]
import type { ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import { forkHelper, listenForParent, progress } from './lib/processes.ts';
import { median, ratio } from './lib/stats.ts';

const MODES = ['absent', 'off', 'on'] as const;
type Mode = (typeof MODES)[number];

const { values } = parseArgs({
  options: {
    serve: { type: 'string' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    modes: { type: 'string', default: MODES.join(',') },
  },
});

/** Spans are made, ended and handed over, then dropped: the request path's share of tracing. */
const DISCARD: SpanExporter = { export: (_spans, done) => done({ code: 0 /* ExportResultCode.SUCCESS */ }), shutdown: async () => {} };

async function serve(mode: Mode): Promise<void> {
  // Tracing first, then express, as the service's entries do; `absent` never loads the module.
  let traceRequestId: ((req: import('node:http').IncomingMessage, requestId: string) => void) | undefined;
  if (mode !== 'absent') {
    const tracing = await import('../src/tracing.ts');
    await tracing.startTracing(mode === 'on' ? { enabled: true, exporter: DISCARD } : { enabled: false });
    traceRequestId = tracing.traceRequestId;
  }
  const [{ default: express }, http] = await Promise.all([import('express'), import('node:http')]);
  const app = express();
  app.use((req, res, next) => {
    const requestId = req.get('x-request-id') ?? 'bench';
    traceRequestId?.(req, requestId);
    res.set('x-request-id', requestId);
    next();
  });
  app.get('/v2/products/:id', (req, res) => {
    res.json({ status: 'success', data: { id: req.params.id, name: 'Nike Dunk Low Retro', variants: 3 } });
  });
  listenForParent(http.createServer(app));
  // Server CPU time per request is the steadier figure on a shared machine.
  process.on('message', () => {
    const usage = process.cpuUsage();
    process.send?.({ cpuMicros: usage.user + usage.system });
  });
}

interface Measurement {
  rps: number;
  p99: number;
  /** Server CPU microseconds per request. */
  cpu: number;
}

async function measure(mode: Mode, seconds: number, connections: number): Promise<Measurement> {
  const { default: autocannon } = await import('autocannon');
  const { child, ready } = await forkHelper<{ port: number }>(import.meta.filename, ['--serve', mode], ['ignore', 'inherit', 'inherit', 'ipc']);
  try {
    const url = `http://127.0.0.1:${ready.port}/v2/products/42`;
    const headers = { 'x-request-id': 'bench-request' };
    const cpuNow = (target: ChildProcess): Promise<number> =>
      new Promise((resolve) => {
        target.once('message', (m: { cpuMicros: number }) => resolve(m.cpuMicros));
        target.send('cpu');
      });
    await autocannon({ url, headers, connections, duration: 2 }); // warm-up
    const before = await cpuNow(child);
    const result = await autocannon({ url, headers, connections, duration: seconds });
    const after = await cpuNow(child);
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${mode}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return { rps: result.requests.average, p99: result.latency.p99, cpu: (after - before) / result.requests.total };
  } finally {
    child.kill('SIGTERM');
  }
}

if (values.serve !== undefined) {
  if (!MODES.includes(values.serve as Mode)) throw new Error(`unknown mode ${values.serve}`);
  // An operator's OTEL_* variables would switch `off` on.
  for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name];
  await serve(values.serve as Mode);
} else {
  const modes = values.modes.split(',') as Mode[];
  for (const mode of modes) if (!MODES.includes(mode)) throw new Error(`unknown mode ${mode}; one of ${MODES.join(', ')}`);
  const runs = new Map<Mode, Measurement[]>(modes.map((mode) => [mode, []]));
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const mode of modes) {
      const r = await measure(mode, Number(values.seconds), Number(values.connections));
      progress(`round ${round} ${mode}: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms, ${r.cpu.toFixed(1)} µs CPU/request`);
      runs.get(mode)!.push(r);
    }
  }
  const of = (mode: Mode, field: keyof Measurement): number => median(runs.get(mode)?.map((r) => r[field]) ?? []);
  console.log('| target | req/s | ÷ absent | p99 ms | server CPU µs/request | ÷ absent |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const mode of modes) {
    const cells = [mode, Math.round(of(mode, 'rps')), ratio(of(mode, 'rps'), of('absent', 'rps')).toFixed(3), of(mode, 'p99'), of(mode, 'cpu').toFixed(1), ratio(of(mode, 'cpu'), of('absent', 'cpu')).toFixed(3)];
    console.log(`| ${cells.join(' | ')} |`);
  }
}
