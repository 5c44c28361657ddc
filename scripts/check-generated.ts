// Fails when any committed generated file differs from a fresh generation of specs/dist (bundled
// before this runs: `pnpm check:generated` is a turbo task after @catalog/specs#bundle). It generates
// into a temporary folder and compares file by file, so it never rewrites the committed files while
// typecheck and tests read them in parallel. On drift it copies the fresh generation into place, so
// `git diff` shows the drift; commit it after review.
import { execFileSync, type ExecFileSyncOptions } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const contract = join(root, 'packages/contract');
const committedDir = join(contract, 'src/generated');

function snapshot(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (path: string): void => {
    if (!existsSync(path)) return;
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else files.set(relative(dir, full), readFileSync(full));
    }
  };
  walk(dir);
  return files;
}

const freshDir = mkdtempSync(join(tmpdir(), 'check-generated-'));
try {
  // What `pnpm generate` runs in packages/contract, pointed at the temporary folder.
  const options: ExecFileSyncOptions = { cwd: contract, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, CATALOG_GENERATED_DIR: freshDir } };
  execFileSync(join(contract, 'node_modules/.bin/openapi-ts'), [], options);
  execFileSync(process.execPath, [join(contract, 'scripts/generate.ts')], options);
  const committed = snapshot(committedDir);
  const fresh = snapshot(freshDir);
  const drift = [...new Set([...committed.keys(), ...fresh.keys()])]
    .sort()
    .filter((file) => {
      const [before, after] = [committed.get(file), fresh.get(file)];
      return before === undefined || after === undefined || !before.equals(after);
    })
    .map((file) => `${committed.has(file) ? (fresh.has(file) ? 'changed' : 'removed') : 'added'}: packages/contract/src/generated/${file}`);
  if (drift.length > 0) {
    rmSync(committedDir, { recursive: true, force: true });
    cpSync(freshDir, committedDir, { recursive: true });
    console.error(`Generated code is stale: regenerate with \`pnpm generate\` and commit.\n  ${drift.join('\n  ')}`);
    process.exitCode = 1;
  } else {
    console.log(`Generated code is up to date (${fresh.size} files).`);
  }
} finally {
  rmSync(freshDir, { recursive: true, force: true });
}
