// `pnpm contract-test` as a consumer team runs it: against the real server it passes with a report
// per operation; against a server that answers 200 with `{}` to everything it fails; bad usage exits 2.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '@catalog/contract';
import { CATALOG, STOREFRONT, toNdjson } from './support/fixtures.ts';
import { createKey, importProducts, type RunningServer, serve, type Workspace, workspace } from './support/server.ts';
import { REPO_ROOT } from './support/spec.ts';

const BIN = join(REPO_ROOT, 'packages/contract-tests/bin/contract-test.ts');

function contractTest(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

let ws: Workspace;
let server: RunningServer;
let liar: Server;
let keys: { free: string; pro: string };

beforeAll(async () => {
  ws = workspace('contract-test-cli');
  const db = `sqlite:${join(ws.dir, 'catalog.db')}`;
  await importProducts(db, 'catalog', ws.file('catalog.ndjson', toNdjson(Object.values(CATALOG))));
  await importProducts(db, 'storefront', ws.file('storefront.ndjson', toNdjson(STOREFRONT)));
  keys = { free: await createKey(db, 'free'), pro: await createKey(db, 'pro') };
  server = await serve(db, ['--heartbeat-ms', '500']);
  liar = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
}, 120_000);

afterAll(async () => {
  await server?.stop();
  liar?.close();
  ws?.dispose();
});

describe('pnpm contract-test', () => {
  it('passes against the real server, reporting each operation', async () => {
    const { code, output } = await contractTest(['--base-url', server.apiUrl, '--sse-url', server.streamUrl, '--free-key', keys.free, '--pro-key', keys.pro, '--runs', '5', '--stream-seconds', '3']);
    expect(code, output).toBe(0);
    for (const operationId of Object.keys(operations)) expect(output.includes(operationId), `the report names ${operationId}`).toBe(true);
  }, 120_000);

  it('fails against a server that does not keep the contract', async () => {
    const url = `http://127.0.0.1:${(liar.address() as AddressInfo).port}`;
    const { code, output } = await contractTest(['--base-url', url, '--sse-url', url, '--free-key', 'f', '--pro-key', 'p', '--runs', '2', '--stream-seconds', '1']);
    expect(code).toBe(1);
    expect(output).toMatch(/refuses a request without a key/);
  }, 120_000);

  it('explains its usage with exit status 2 when a flag is missing, and 0 on --help', async () => {
    const missing = await contractTest(['--base-url', 'http://127.0.0.1:1']);
    expect(missing.code).toBe(2);
    expect(missing.output).toContain('missing --sse-url, --free-key, --pro-key');
    const help = await contractTest(['--help']);
    expect(help.code).toBe(0);
    expect(help.output).toContain('usage: pnpm contract-test');
  });
});
