// Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most self time, and the
// most inclusive time (a function and what it calls), each as a share of the sampled time.
//
//   node bench/lib/cpu-profile-summary.ts FILE.cpuprofile [--top 25] [--from S] [--to S]
// Prints the busy share of each second first; --from/--to keep the samples between those seconds
// of the profile (the load, not the start-up nor the shutdown).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^.*\/(node_modules\/|src\/|bench\/)/u, '$1').replace(/^node:/u, '');
  return `${functionName || '(anonymous)'} ${file}${file === '' ? '' : `:${lineNumber + 1}`}`;
}

export function summarise(profile: Profile, top: number, fromSeconds = 0, toSeconds = Infinity): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfTime = new Map<number, number>();
  let total = 0;
  const idleIds = new Set(profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id));
  const seconds: { all: number; busy: number }[] = [];
  let at = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    const second = (seconds[Math.floor(at / 1e6)] ??= { all: 0, busy: 0 });
    second.all += delta;
    if (!idleIds.has(id)) second.busy += delta;
    if (at < fromSeconds * 1e6 || at >= toSeconds * 1e6) return;
    selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
    total += delta;
  });
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, time] of selfTime) {
    const node = byId.get(id)!;
    self.set(label(node), (self.get(label(node)) ?? 0) + time);
    // Each label once per stack, so recursion does not count twice.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = label(byId.get(at)!);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + time);
    }
  }
  const rows = (map: Map<string, number>): string[] =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, time]) => `${((100 * time) / total).toFixed(1).padStart(5)}%  ${name}`);
  const timeline = seconds.map((second, i) => `${i}:${Math.round((100 * second.busy) / second.all)}`).join(' ');
  return [`busy % by second: ${timeline}`, `sampled ${(total / 1e6).toFixed(2)} s`, '', 'self:', ...rows(self), '', 'inclusive:', ...rows(inclusive)].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } } });
  const file = positionals[0];
  if (file === undefined) throw new Error('usage: cpu-profile-summary.ts FILE.cpuprofile [--top 25]');
  process.stdout.write(`${summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(values.top ?? 25), Number(values.from ?? 0), Number(values.to ?? Infinity))}\n`);
}
