// No module of src/ loads, directly or through others, a module that loads it back: in a loop,
// what a module sees of another while loading depends on which of them was imported first.
// Static and dynamic imports count; type-only imports are erased before run time and do not.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../src/', import.meta.url).pathname;

/** `import … from '…'`, `export … from '…'` and `import '…'` at the start of a line. */
const STATIC = /^(?:import|export)\s+(type\s+)?(?:([^;'"]*?)\s+from\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The relative modules `text` loads at run time. */
function valueImports(text: string): string[] {
  const loaded: string[] = [];
  for (const [, typeKeyword, clause, specifier] of text.matchAll(STATIC)) {
    if (typeKeyword !== undefined || (clause !== undefined && onlyTypes(clause))) continue;
    loaded.push(specifier!);
  }
  for (const [, specifier] of text.matchAll(DYNAMIC)) loaded.push(specifier!);
  return loaded.filter((specifier) => specifier.startsWith('.'));
}

/** `{ type A, type B }`: every name imported as a type. */
function onlyTypes(clause: string): boolean {
  const braced = /^\{([\s\S]*)\}$/.exec(clause.trim());
  if (braced === null) return false;
  const names = braced[1]!.split(',').map((name) => name.trim()).filter((name) => name !== '');
  return names.length > 0 && names.every((name) => name.startsWith('type '));
}

function graphOf(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const name of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    if (!name.endsWith('.ts')) continue;
    const file = join(root, name);
    graph.set(file, valueImports(readFileSync(file, 'utf8')).map((specifier) => resolve(dirname(file), specifier)));
  }
  return graph;
}

/** Each loop found by a depth-first walk, as the modules on it, the first repeated at the end. */
function loopsOf(graph: Map<string, string[]>): string[][] {
  const loops: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string): void => {
    const at = path.indexOf(file);
    if (at >= 0) {
      loops.push([...path.slice(at), file]);
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const next of graph.get(file) ?? []) visit(next);
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  return loops;
}

describe('the import graph of src/', () => {
  it('has no loop between modules loaded at run time', () => {
    const loops = loopsOf(graphOf(SRC)).map((loop) => loop.map((file) => relative(SRC, file)).join(' → '));
    expect(loops).toEqual([]);
  });

  it('sees the imports that load a module, and skips those erased with the types', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from './b.ts';",
      "import { type C, type D } from './c.ts';",
      "import { type E, f } from './e.ts';",
      'import {\n  g,\n  type H,\n} from "./g.ts";',
      "import {\n  i,\n  type J,\n} from './i.ts';",
      "export { k } from './k.ts';",
      "export type { L } from './l.ts';",
      "import './side-effect.ts';",
      "import { m } from 'node:module';",
      "  const { n } = await import('./n.ts');",
      "// import { o } from './commented.ts';",
    ].join('\n');
    expect(valueImports(text)).toEqual(['./a.ts', './e.ts', './g.ts', './i.ts', './k.ts', './side-effect.ts', './n.ts']);
  });

  it('finds a loop of any length, and only once', () => {
    const graph = new Map([
      ['/a.ts', ['/b.ts']],
      ['/b.ts', ['/c.ts']],
      ['/c.ts', ['/a.ts']],
      ['/d.ts', ['/a.ts']],
    ]);
    expect(loopsOf(graph)).toEqual([['/a.ts', '/b.ts', '/c.ts', '/a.ts']]);
  });
});
