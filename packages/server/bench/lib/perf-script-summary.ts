// Summarises `perf script` output of an on-CPU profile (Linux perf, software event cpu-clock):
// unlike `--cpu-prof`, whose samples are taken on wall-clock ticks and so count the time a thread
// waits for a core on a loaded machine as busy, perf samples a thread only while it runs.
//
// Recording a server's stream thread with JavaScript frames named (V8 writes a jitdump that
// `perf inject --jit` turns into symbols; the thread is `WorkerThread`):
//
//   NODE_OPTIONS=--perf-prof node bench/watch-bench.ts …        # each server writes jit-<pid>.dump in its cwd
//   perf record -k 1 -e cpu-clock -F 2000 -g -p <server pid> -o run.data -- sleep 12
//   perf inject --jit -i run.data -o run.jit.data               # writes jitted-<pid>-*.so beside the dump: delete them after
//   perf script -i run.jit.data --comm WorkerThread -F comm,tid,ip,sym > run.script
//   node bench/lib/perf-script-summary.ts run.script [--under REGEX [--without REGEX] [--depth N]] [--top 25]
//
// Without --under: samples by the first JavaScript frame from the leaf up ("(gc)" when none and
// the stack is the collector's), and the share of samples whose stack holds each of a few
// landmarks. With --under: the samples whose stack holds a frame matching REGEX (and none matching
// --without), by the N frames just below its outermost match.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

type Stack = string[];

export function stacksOf(script: string): Stack[] {
  const stacks: Stack[] = [];
  for (const block of script.split('\n\n')) {
    const frames = block
      .split('\n')
      .slice(1)
      .map((line) => line.trim().replace(/^[0-9a-f]+ /u, ''))
      .filter((frame) => frame !== '');
    if (frames.length > 0) stacks.push(frames);
  }
  return stacks;
}

const short = (frame: string): string => frame.replace(/file:\/\/\/\S*?\/packages\//u, '').slice(0, 90);

function table(counts: Map<string, number>, total: number, top: number): string[] {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, count]) => `${String(count).padStart(7)} ${((100 * count) / total).toFixed(1).padStart(5)}%  ${name}`);
}

function count(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

export function summarise(stacks: Stack[], top: number): string {
  const byFrame = new Map<string, number>();
  for (const frames of stacks) {
    const js = frames.find((frame) => frame.startsWith('JS:'));
    count(byFrame, js !== undefined ? short(js) : frames.some((frame) => /Heap::|Scaveng|MarkCompact/u.test(frame)) ? '(gc)' : `(native) ${short(frames[0] ?? '')}`);
  }
  const landmarks: [string, RegExp][] = [
    ['socket writes (Socket._writeGeneric and below)', /Socket\._writeGeneric/u],
    ['the hub reading the log and offering (#follow)', /#follow /u],
    ['waking subscribers (#wakeAll)', /#wakeAll /u],
    ['write callbacks (afterWriteTick)', /afterWriteTick /u],
    ['batch encoding (BatchEncoder encode)', /JS:.*'?encode \S*batch-encoder/u],
    ['timers (heartbeats, log polls)', /listOnTimeout /u],
    ['garbage collection on this thread', /Heap::CollectGarbage/u],
  ];
  const held = new Map<string, number>();
  for (const frames of stacks) for (const [name, pattern] of landmarks) if (frames.some((frame) => pattern.test(frame))) count(held, name);
  return [`samples ${stacks.length}`, '', 'by first JavaScript frame:', ...table(byFrame, stacks.length, top), '', 'stacks holding:', ...table(held, stacks.length, landmarks.length)].join('\n');
}

export function below(stacks: Stack[], under: RegExp, without: RegExp | null, depth: number, top: number): string {
  const byCallee = new Map<string, number>();
  let matching = 0;
  for (const frames of stacks) {
    const at = frames.findLastIndex((frame) => under.test(frame));
    if (at < 0 || (without !== null && frames.some((frame) => without.test(frame)))) continue;
    matching += 1;
    count(byCallee, frames.slice(Math.max(0, at - depth), at).reverse().map(short).join(' > ') || '(self)');
  }
  return [`samples ${stacks.length}, under ${under.source}: ${matching}`, ...table(byCallee, stacks.length, top)].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string' }, under: { type: 'string' }, without: { type: 'string' }, depth: { type: 'string' } },
  });
  const file = positionals[0];
  if (file === undefined) throw new Error('usage: perf-script-summary.ts FILE [--under REGEX [--without REGEX] [--depth N]] [--top 25]');
  const stacks = stacksOf(readFileSync(file, 'utf8'));
  const top = Number(values.top ?? 25);
  process.stdout.write(
    `${values.under === undefined ? summarise(stacks, top) : below(stacks, new RegExp(values.under, 'u'), values.without === undefined ? null : new RegExp(values.without, 'u'), Number(values.depth ?? 1), top)}\n`,
  );
}
