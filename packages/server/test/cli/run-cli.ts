// Runs `node src/cli/main.ts <args>` as a user would and captures what they would see.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { vi } from 'vitest';

export const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * A command module's `run` (what main.ts calls after choosing it) in this process: what it writes to
 * stdout and stderr, and its exit status. For tests of a command's behaviour; each command keeps a
 * spawned test through runCli for what only the process shows.
 */
export async function runInProcess(run: (args: string[]) => Promise<number | void>, args: readonly string[]): Promise<CliResult> {
  const written = { stdout: '', stderr: '' };
  const capture = (stream: 'stdout' | 'stderr') =>
    vi.spyOn(process[stream], 'write').mockImplementation((chunk: string | Uint8Array) => {
      written[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    });
  const spies = [capture('stdout'), capture('stderr')];
  try {
    const code = await run([...args]);
    return { code: typeof code === 'number' ? code : 0, ...written };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}
