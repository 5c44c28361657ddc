// Packs @catalog/client as a consumer gets it and installs it into a scratch project outside the
// workspace, offline: the runtime dependencies are packed from the workspace's installed copies,
// so no registry is needed and no workspace link leaks in.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });
}

/**
 * Packs the client and its runtime dependencies into `packDir`; returns the client's tarball first.
 * `build: false` skips prepack's rebuild of dist/ (turbo built it already), so test files that
 * import @catalog/client at the same time never see dist/ half written.
 */
export function packClient(packDir: string, { build = true }: { build?: boolean } = {}): string[] {
  mkdirSync(packDir, { recursive: true });
  run('pnpm', ['pack', '--pack-destination', packDir, ...(build ? [] : ['--config.ignore-scripts=true'])], packageDir);
  const [client] = readdirSync(packDir);
  if (client === undefined) throw new Error('pnpm pack wrote no tarball');
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  const require = createRequire(join(packageDir, 'package.json'));
  const tarballs = [join(packDir, client)];
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    // The package's directory: its package.json may not be exported, so walk up from its entry point.
    let dir = dirname(require.resolve(name));
    while (!readdirSync(dir).includes('package.json') || (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name !== name) dir = dirname(dir);
    const file = run('npm', ['pack', dir, '--pack-destination', packDir, '--silent'], packDir).trim().split('\n').at(-1) ?? '';
    tarballs.push(join(packDir, file));
  }
  return tarballs;
}

/** A scratch ES module project at `project` with the packed client installed, offline. */
export function installPackedClient(project: string, tarballs: readonly string[]): void {
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  run('npm', ['install', ...tarballs, '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], project);
}
