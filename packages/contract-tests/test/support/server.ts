// The real server as a black box, driven only through its CLI (`packages/server/src/cli/main.ts`):
// `import`, `keys create`, `prices publish` run to completion; `serve` runs until stopped and
// announces its URLs in a structured log line `{"msg":"listening","apiUrl":…,"streamUrl":…}` on
// stderr, on ports chosen by the OS unless fixed ones are given (a restart on the same ports). Everything lives in a temporary directory removed by `dispose`. A command that fails or a
// server that does not announce itself within 30 s fails the test with the process's output.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './spec.ts';

/** The server CLI; CATALOG_CLI points the suite at another copy (faults/README.md plants faults that way). */
const CLI = process.env['CATALOG_CLI'] ?? join(REPO_ROOT, 'packages/server/src/cli/main.ts');
const run = promisify(execFile);


export async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`catalog ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: error });
  }
}

export interface Workspace {
  dir: string;
  file(name: string, content: string): string;
  dispose(): void;
}

export function workspace(prefix: string): Workspace {
  const dir = mkdtempSync(join(tmpdir(), `contract-${prefix}-`));
  return {
    dir,
    file(name, content) {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export async function importProducts(db: string, kind: 'catalog' | 'storefront', ndjsonFile: string): Promise<void> {
  await cli(['import', '--db', db, '--kind', kind, ndjsonFile]);
}

export async function createKey(db: string, plan: 'free' | 'pro'): Promise<string> {
  const { stdout } = await cli(['keys', 'create', '--db', db, '--plan', plan]);
  const key = stdout.trim().split('\n').pop()?.trim();
  if (key === undefined || key === '') throw new Error(`keys create printed no key: ${stdout}`);
  return key;
}

export async function publishPrices(db: string, ndjsonFile: string): Promise<void> {
  await cli(['prices', 'publish', '--price-log', db, ndjsonFile]);
}

export interface RunningServer {
  apiUrl: string;
  streamUrl: string;
  /** Every stderr line, as written. */
  logs: string[];
  /** SIGTERM (a clean drain), SIGKILL after 5 s; resolves when the process has exited. */
  stop(): Promise<void>;
  /** SIGKILL at once, as a crash would: no drain, streams cut; resolves when the process has exited. */
  kill(): Promise<void>;
}

export interface Ports {
  api: number;
  sse: number;
}

/** Two ports free right now (listen on 0, read, close), so a server can be restarted on the same ones. */
export async function freePorts(): Promise<Ports> {
  const one = () =>
    new Promise<number>((resolvePort, reject) => {
      const probe = createServer();
      probe.once('error', reject);
      probe.listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => (typeof address === 'object' && address !== null ? resolvePort(address.port) : reject(new Error('no port'))));
      });
    });
  const api = await one();
  let sse = await one();
  while (sse === api) sse = await one();
  return { api, sse };
}

export async function serve(db: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}, ports: Ports = { api: 0, sse: 0 }): Promise<RunningServer> {
  const portArgs = ['--port', String(ports.api), '--sse-port', String(ports.sse)];
  const child: ChildProcess = spawn(process.execPath, [CLI, 'serve', '--db', db, ...portArgs, ...extraArgs], {
    env: { ...process.env, ...env },
    // The log goes to stderr; stdout is read the same way in case a logger writes there.
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const stop = (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolveStop) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolveStop();
      });
      child.kill('SIGTERM');
    });
  };
  const kill = (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolveKill) => {
      child.once('exit', () => resolveKill());
      child.kill('SIGKILL');
    });
  };
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`serve did not log "listening" within 30 s:\n${logs.join('\n')}`));
    }, 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${String(code)} before listening:\n${logs.join('\n')}`));
    });
    const lineReader = () => {
      let pending = '';
      return (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) {
          logs.push(line);
          let entry: { msg?: unknown; apiUrl?: unknown; streamUrl?: unknown };
          try {
            entry = JSON.parse(line) as typeof entry;
          } catch {
            continue;
          }
          if (entry.msg === 'listening' && typeof entry.apiUrl === 'string' && typeof entry.streamUrl === 'string') {
            clearTimeout(timer);
            resolveStart({ apiUrl: entry.apiUrl.replace(/\/$/, ''), streamUrl: entry.streamUrl.replace(/\/$/, ''), logs, stop, kill });
          }
        }
      };
    };
    child.stderr?.on('data', lineReader());
    child.stdout?.on('data', lineReader());
  });
}
