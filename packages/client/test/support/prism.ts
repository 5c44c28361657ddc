// Starts the Prism mock of the bundled OpenAPI document on a free port, for tests of the HTTP methods.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const openapiJson = resolve(repoRoot, 'specs/dist/openapi.json');
const prismCli = resolve(repoRoot, 'specs/node_modules/@stoplight/prism-cli/dist/index.js');

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface PrismMock {
  baseUrl: string;
  stop(): Promise<void>;
}

export async function startPrism(): Promise<PrismMock> {
  if (!existsSync(openapiJson)) throw new Error(`${openapiJson} is missing: run \`pnpm --filter @catalog/specs bundle\` first`);
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [prismCli, 'mock', openapiJson, '--host', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });

  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`prism exited with ${child.exitCode}: ${stderr}`);
    try {
      await fetch(`${baseUrl}/v2/brands`);
      return { baseUrl, stop };
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  await stop();
  throw new Error(`prism did not answer on ${baseUrl} within 30 s: ${stderr}`);
}
