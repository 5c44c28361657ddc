// Fails when any committed generated file differs from a fresh generation: it hashes every file
// under the generated/ folders, regenerates from specs/ (no turbo cache), and compares. A stale
// file is left regenerated, so `git diff` shows the drift; commit it after review.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const generatedDirs = ['packages/contract/src/generated'].map((dir) => join(root, dir));

function snapshot(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(relative(root, path), createHash('sha256').update(readFileSync(path)).digest('hex'));
    }
  };
  generatedDirs.forEach(walk);
  return files;
}

const before = snapshot();
execFileSync('pnpm', ['exec', 'turbo', 'run', 'generate', '--force', '--output-logs=errors-only'], { cwd: root, stdio: 'inherit' });
const after = snapshot();

const drift = [...new Set([...before.keys(), ...after.keys()])]
  .sort()
  .filter((file) => before.get(file) !== after.get(file))
  .map((file) => `${before.has(file) ? (after.has(file) ? 'changed' : 'removed') : 'added'}: ${file}`);

if (drift.length > 0) {
  console.error(`Generated code is stale: regenerate with \`pnpm generate\` and commit.\n  ${drift.join('\n  ')}`);
  process.exit(1);
}
console.log(`Generated code is up to date (${after.size} files).`);
