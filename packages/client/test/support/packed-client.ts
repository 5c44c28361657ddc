// The client as a consumer gets it, packed ONCE for every test that needs it (this package's and the
// contract tests'): the tarball `pnpm pack` makes of the built dist/, its runtime dependencies packed
// from the workspace's installed copies, and a scratch ES module project with all of them installed
// offline (no registry, no workspace link). `pnpm test` makes it as the turbo task `pack:consumer`
// (scripts/pack.ts, into .pack/) after `build`; a test run on its own packs when .pack/ is missing or
// was packed from another dist/.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const packRoot = join(packageDir, '.pack');

interface PackManifest {
  /** Hash of dist/ when packed. */
  dist: string;
  /** The client's tarball first, then its runtime dependencies', relative to .pack/. */
  tarballs: string[];
}

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });
}

function distHash(): string {
  const hash = createHash('sha256');
  const dist = join(packageDir, 'dist');
  if (!existsSync(dist)) throw new Error(`${dist} is missing: build the client first (pnpm --filter @catalog/client build)`);
  for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)).sort()) {
    hash.update(entry).update(readFileSync(entry));
  }
  return hash.digest('hex');
}

/**
 * Packs the built client into `.pack/` with its runtime dependencies and installs them into
 * `.pack/consumer/`. Never rebuilds dist/ (prepack would; turbo built it already, and tests of other
 * packages import it meanwhile). Written beside and renamed into place, so a reader never sees half.
 */
export function pack(): void {
  const staging = `${packRoot}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  run('pnpm', ['pack', '--pack-destination', staging, '--config.ignore-scripts=true'], packageDir);
  const [client] = readdirSync(staging);
  if (client === undefined) throw new Error('pnpm pack wrote no tarball');
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  const require = createRequire(join(packageDir, 'package.json'));
  const tarballs = [client];
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    // The package's directory: its package.json may not be exported, so walk up from its entry point.
    let dir = dirname(require.resolve(name));
    while (!readdirSync(dir).includes('package.json') || (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name !== name) dir = dirname(dir);
    tarballs.push(run('npm', ['pack', dir, '--pack-destination', staging, '--silent'], staging).trim().split('\n').at(-1) ?? '');
  }
  const consumer = join(staging, 'consumer');
  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  run('npm', ['install', ...tarballs.map((file) => join(staging, file)), '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock'], consumer);
  writeFileSync(join(staging, 'pack.json'), JSON.stringify({ dist: distHash(), tarballs } satisfies PackManifest));
  rmSync(packRoot, { recursive: true, force: true });
  renameSync(staging, packRoot);
}

function packed(): PackManifest {
  const file = join(packRoot, 'pack.json');
  if (existsSync(file)) {
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as PackManifest;
    if (manifest.dist === distHash()) return manifest;
  }
  pack();
  return JSON.parse(readFileSync(file, 'utf8')) as PackManifest;
}

/** The packed tarballs, the client's first. */
export function packedTarballs(): string[] {
  return packed().tarballs.map((file) => join(packRoot, file));
}

/** A copy of the scratch ES module project with the packed client installed, at `project`. */
export function installPackedClient(project: string): void {
  packed();
  cpSync(join(packRoot, 'consumer'), project, { recursive: true });
}
