// Drives the server as a black box through its CLI, and the helper processes (bare servers,
// Prism, subscriber workers). Every child gets the same Node as the harness and is stopped with
// SIGTERM (SIGKILL after a grace period) so a failed run leaves nothing listening.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { connect, createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** packages/server: the CLI resolves relative paths from here. */
export const SERVER_DIR = fileURLToPath(new URL('../..', import.meta.url));
export const REPO_ROOT = join(SERVER_DIR, '..', '..');

/** Progress goes to stderr; stdout carries only the final table. */
export function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** PATH with this Node first, so shims (`prism`) run on the same Node as the harness. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`, ...extra };
}

export class CliError extends Error {}

export interface CliRun {
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs `node <cli> ...args` to completion. stderr is echoed as progress when `echo` is set (seed,
 * import) and kept for the error message otherwise.
 */
export async function runCli(cli: string, args: readonly string[], options: { echo?: boolean; timeoutMs?: number } = {}): Promise<CliRun> {
  const start = performance.now();
  const child = spawn(process.execPath, [cli, ...args], { cwd: SERVER_DIR, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-20_000);
    if (options.echo === true) process.stderr.write(chunk);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 3_600_000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode) => resolve(exitCode));
  }).finally(() => clearTimeout(timer));
  if (code !== 0) {
    throw new CliError(`catalog ${args.slice(0, 2).join(' ')} exited with ${String(code)}: ${lastLines(stderr, 5)}`);
  }
  return { stdout, stderr, ms: performance.now() - start };
}

export function lastLines(text: string, count: number): string {
  return text.trim().split('\n').slice(-count).join(' | ');
}

export interface RunningServer {
  apiUrl: string;
  streamUrl: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * `command args` run with the open-file limit raised to the hard limit: a process holding
 * 10,000 sockets needs more than the common soft limit of 1,024. `exec` keeps the pid (RSS is
 * read from it) and any IPC channel. Where the hard limit is lower, the process starts anyway
 * and connections beyond it fail (the bench reports them as failed).
 */
function withRaisedFileLimit(command: string, args: readonly string[]): [string, string[]] {
  return ['/bin/sh', ['-c', 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"', command, ...args]];
}

/**
 * Starts `serve` on two free ports and resolves once it is ready: when it logs `"msg":"listening"`
 * (with `apiUrl` and `streamUrl`), or when both ports accept connections, since `--log-level warn`
 * (needed so access logs do not weigh on the benchmark) may drop that info line.
 */
export async function startServer(cli: string, args: readonly string[], timeoutMs = 120_000, nodeArgs: readonly string[] = []): Promise<RunningServer> {
  const [apiPort, ssePort] = [await freePort(), await freePort()];
  const fallback = { apiUrl: `http://127.0.0.1:${apiPort}`, streamUrl: `http://127.0.0.1:${ssePort}` };
  // Load generators send from one address with one key: limits are off unless the run sets them.
  const limits = args.some((arg) => arg.startsWith('--rate-limit')) ? [] : ['--rate-limit', '0', '--auth-failure-limit', '0', '--max-streams-per-key', '1000000'];
  const child = spawn(...withRaisedFileLimit(process.execPath, [...nodeArgs, cli, 'serve', ...limits, ...args, '--port', String(apiPort), '--sse-port', String(ssePort)]), {
    cwd: SERVER_DIR,
    env: childEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let tail = '';
  let settled = false;
  const lines = createInterface({ input: child.stderr });
  const listening = new Promise<{ apiUrl: string; streamUrl: string }>((resolve, reject) => {
    const done = (urls: { apiUrl: string; streamUrl: string } | Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (urls instanceof Error) reject(urls);
      else resolve(urls);
    };
    const timer = setTimeout(() => done(new CliError(`serve was not ready within ${timeoutMs} ms: ${lastLines(tail, 5)}`)), timeoutMs);
    lines.on('line', (line) => {
      tail = (tail + line + '\n').slice(-10_000);
      try {
        const entry = JSON.parse(line) as { msg?: unknown; apiUrl?: unknown; streamUrl?: unknown };
        if (entry.msg === 'listening' && typeof entry.apiUrl === 'string' && typeof entry.streamUrl === 'string') {
          done({ apiUrl: entry.apiUrl.replace(/\/$/, ''), streamUrl: entry.streamUrl.replace(/\/$/, '') });
        }
      } catch {
        // Not a log object (a warning from Node, say): kept in the tail for error messages only.
      }
    });
    child.on('error', (error) => done(error));
    child.on('exit', (code) => done(new CliError(`serve exited with ${String(code)} before it was ready: ${lastLines(tail, 5)}`)));
    const poll = async (): Promise<void> => {
      while (!settled) {
        if ((await accepts(apiPort)) && (await accepts(ssePort))) done(fallback);
        else await sleep(100);
      }
    };
    void poll();
  });
  try {
    const urls = await listening;
    let stopping = false;
    child.once('exit', (code, signal) => {
      if (!stopping) progress(`serve exited unasked (${String(code ?? signal)}): ${lastLines(tail, 10)}`);
    });
    return {
      ...urls,
      pid: child.pid ?? -1,
      stop: () => {
        stopping = true;
        return stopChild(child);
      },
    };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Spawns a long-running helper and waits for its first IPC message (its "ready"). */
export async function forkHelper<T>(script: string, args: readonly string[] = [], stdio: StdioOptions = ['ignore', 'inherit', 'inherit', 'ipc']): Promise<{ child: ChildProcess; ready: T }> {
  const child = spawn(...withRaisedFileLimit(process.execPath, [script, ...args]), { env: childEnv(), stdio });
  const ready = await new Promise<T>((resolve, reject) => {
    child.once('message', (message) => resolve(message as T));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${String(code)} before it was ready`)));
  });
  return { child, ready };
}

/** The helper's side of forkHelper: listen on a free loopback port, send `{ port }` as the ready message, stop on SIGTERM. */
export function listenForParent(server: HttpServer): void {
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ port: typeof address === 'object' && address !== null ? address.port : 0 });
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

/** Resident set size of a process, in KiB, from /proc (Linux only; NaN elsewhere). */
export function readRssKib(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] === undefined ? Number.NaN : Number(match[1]);
  } catch {
    return Number.NaN;
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not find a free port');
  return address.port;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
