// Starts the Prism mock of the bundled OpenAPI document on a free port, for tests of the HTTP methods.
// Prism serves a private copy of the document: it restarts its listener whenever the file it was given
// changes, and specs/dist may be bundled again while this runs (a `pnpm generate` beside it).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

// Found through the package's dependency, not a relative path: Stryker runs these tests in a copy of the package.
const specsRoot = dirname(createRequire(import.meta.url).resolve('@catalog/specs/package.json'));
const openapiJson = resolve(specsRoot, 'dist/openapi.json');
const prismCli = resolve(specsRoot, 'node_modules/@stoplight/prism-cli/dist/index.js');

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
  const dir = mkdtempSync(join(tmpdir(), 'prism-'));
  const document = join(dir, 'openapi.json');
  copyFileSync(openapiJson, document);
  const child: ChildProcess = spawn(process.execPath, [prismCli, 'mock', document, '--host', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await new Promise<void>((done) => {
      if (child.exitCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`prism exited with ${child.exitCode}: ${stderr}`);
    }
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
