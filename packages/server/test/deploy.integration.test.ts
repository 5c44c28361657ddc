// The production bundle as an operator deploys it: `pnpm bundle:server <dir>` (pnpm deploy --prod)
// from this workspace, then, with only the system's Node 20 on PATH and no build tools, the
// bundle's bin/catalog runs `migrate` and `serve` on its own Node 24: /readyz answers 200, and
// SIGTERM stops it with exit status 0.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../..');
const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';
let dir: string;
let bundle: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'deploy-'));
  bundle = join(dir, 'bundle');
  // As an operator runs it: with the system's Node first on PATH (pnpm itself found further on),
  // not the workspace's Node 24 that a task's PATH starts with (why it matters: scripts/bundle-server.ts).
  execFileSync('pnpm', ['bundle:server', bundle], { cwd: ROOT, stdio: 'pipe', timeout: 240_000, env: { ...process.env, PATH: `${SYSTEM_PATH}:${process.env['PATH'] ?? ''}` } });
}, 300_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('the production bundle', () => {
  const env = { PATH: SYSTEM_PATH, HOME: dir };

  it('holds the service and its Node 24, without the workspace', () => {
    expect(execFileSync('sh', ['-c', 'node --version'], { env, encoding: 'utf8' })).toMatch(/^v20\./);
    expect(execFileSync(join(bundle, 'bin/catalog'), ['--version'], { env, encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(execFileSync(join(bundle, 'node_modules/node24/bin/node'), ['--version'], { env, encoding: 'utf8' })).toMatch(/^v24\./);
  });

  it('migrates and serves with only the system Node on PATH: ready, then a clean stop on SIGTERM', async () => {
    const db = `sqlite:${join(dir, 'catalog.db')}`;
    expect(execFileSync(join(bundle, 'bin/catalog'), ['migrate', '--db', db], { env, encoding: 'utf8' })).toMatch(/schema is at version/);
    const child = spawn(join(bundle, 'bin/catalog'), ['serve', '--db', db, '--port', '0', '--sse-port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    const apiUrl = await new Promise<string>((resolve, reject) => {
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        const line = output.split('\n').find((text) => text.includes('"listening"'));
        if (line !== undefined) resolve((JSON.parse(line) as { apiUrl: string }).apiUrl);
      });
      child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
    });
    expect((await fetch(`${apiUrl}/readyz`)).status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);
});
