// "Free when off" (issue 49): the same Express app, each in its own process, (a) with the tracing
// module never imported, (b) with it imported, `startTracing()` answered off and the request-id
// hook called on every request, as the service wires it, and (c) tracing on, spans discarded
// (what switching it on costs the request path, before any exporter). In each round the targets
// are loaded at the same time, so a noisy machine affects all alike; figures are medians over
// rounds, ratios the median of each round's ratio. Then the one
// per-request difference between (a) and (b), `traceRequestId` answered off, timed alone, since
// on a loaded machine the rounds' spread exceeds it by orders. Reports, never asserts.
//   node bench/tracing-off-bench.ts [--seconds 10] [--rounds 3] [--connections 25] [--modes absent,off,on]
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
    rounds: { type: 'string', default: '3' },
    /** Per target. */
    connections: { type: 'string', default: '25' },
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

/** One round: every target loaded at once for `seconds`, so each meets the same machine. */
async function measureTogether(modes: readonly Mode[], seconds: number, connections: number): Promise<Measurement[]> {
  const { default: autocannon } = await import('autocannon');
  const targets = await Promise.all(modes.map((mode) => forkHelper<{ port: number }>(import.meta.filename, ['--serve', mode], ['ignore', 'inherit', 'inherit', 'ipc'])));
  try {
    const headers = { 'x-request-id': 'bench-request' };
    const load = (duration: number) => Promise.all(targets.map(({ ready }) => autocannon({ url: `http://127.0.0.1:${ready.port}/v2/products/42`, headers, connections, duration })));
    const cpuNow = (target: ChildProcess): Promise<number> =>
      new Promise((resolve) => {
        target.once('message', (m: { cpuMicros: number }) => resolve(m.cpuMicros));
        target.send('cpu');
      });
    const cpuOfAll = () => Promise.all(targets.map(({ child }) => cpuNow(child)));
    await load(2); // warm-up
    const before = await cpuOfAll();
    const results = await load(seconds);
    const after = await cpuOfAll();
    return results.map((result, i) => {
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${modes[i]}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      return { rps: result.requests.average, p99: result.latency.p99, cpu: (after[i]! - before[i]!) / result.requests.total };
    });
  } finally {
    for (const { child } of targets) child.kill('SIGTERM');
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
    const measured = await measureTogether(modes, Number(values.seconds), Number(values.connections));
    measured.forEach((r, i) => {
      progress(`round ${round} ${modes[i]}: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms, ${r.cpu.toFixed(1)} µs CPU/request`);
      runs.get(modes[i]!)!.push(r);
    });
  }
  const of = (mode: Mode, field: keyof Measurement): number => median(runs.get(mode)?.map((r) => r[field]) ?? []);
  // A ratio is the median of the rounds' ratios: each round's targets met the same machine.
  const pairedRatio = (mode: Mode, field: keyof Measurement): number =>
    median(runs.get(mode)?.map((r, round) => ratio(r[field], runs.get('absent')?.[round]?.[field])) ?? []);
  console.log('| target | req/s | ÷ absent | p99 ms | server CPU µs/request | ÷ absent |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const mode of modes) {
    const cells = [mode, Math.round(of(mode, 'rps')), pairedRatio(mode, 'rps').toFixed(3), of(mode, 'p99'), of(mode, 'cpu').toFixed(1), pairedRatio(mode, 'cpu').toFixed(3)];
    console.log(`| ${cells.join(' | ')} |`);
  }
  const { IncomingMessage } = await import('node:http');
  const { traceRequestId } = await import('../src/tracing.ts');
  const { Socket } = await import('node:net');
  const req = new IncomingMessage(new Socket());
  const calls = 10_000_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) traceRequestId(req, 'bench-request');
  const perCall = Number(process.hrtime.bigint() - started) / calls;
  console.log(`\ntraceRequestId with tracing off: ${perCall.toFixed(2)} ns per request (${calls.toLocaleString('en')} calls)`);
}
