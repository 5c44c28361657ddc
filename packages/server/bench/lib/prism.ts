// Prism mocking the same OpenAPI document: what teams run before the real server exists. It serves
// the spec's examples and validates requests; it logs every request to stdout, which we drain.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv, freePort, lastLines, progress, REPO_ROOT, stopChild } from './processes.ts';

export interface RunningPrism {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const SPEC = join(REPO_ROOT, 'specs', 'dist', 'openapi.json');

function prismBinary(): string {
  const candidates = [join(REPO_ROOT, 'node_modules', '.bin', 'prism'), join(REPO_ROOT, 'specs', 'node_modules', '.bin', 'prism')];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) throw new Error(`prism is not installed (looked in ${candidates.join(', ')}); run pnpm install`);
  return found;
}

async function ensureBundledSpec(): Promise<void> {
  if (existsSync(SPEC)) return;
  progress('bundling specs/dist/openapi.json for Prism');
  const child = spawn('pnpm', ['--filter', '@catalog/specs', 'bundle'], { cwd: REPO_ROOT, env: childEnv(), stdio: ['ignore', 'ignore', 'inherit'] });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0 || !existsSync(SPEC)) throw new Error(`pnpm --filter @catalog/specs bundle failed (${String(code)})`);
}

export async function startPrism(timeoutMs = 60_000): Promise<RunningPrism> {
  await ensureBundledSpec();
  const port = await freePort();
  const child = spawn(prismBinary(), ['mock', SPEC, '--host', '127.0.0.1', '--port', String(port)], {
    cwd: REPO_ROOT,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`prism did not start within ${timeoutMs} ms: ${lastLines(tail, 5)}`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      tail = (tail + chunk.toString('utf8')).slice(-4000);
      if (tail.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`prism exited with ${String(code)}: ${lastLines(tail, 5)}`));
    });
  });
  try {
    await ready;
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  // Keep draining so a full pipe never blocks Prism's logger; the tail is dropped.
  child.stdout.removeAllListeners('data');
  child.stderr.removeAllListeners('data');
  child.stdout.resume();
  child.stderr.resume();
  return { url: `http://127.0.0.1:${port}`, pid: child.pid ?? -1, stop: () => stopChild(child) };
}
