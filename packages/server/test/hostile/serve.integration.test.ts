// The hostile checks against `catalog serve` itself, as a separate process on a seeded catalog, with
// bounded loops on loopback: a failed-authentication flood on both ports (429 after the allowance,
// valid keys still served, a bounded number of log lines), many streams on one key, idle sockets,
// oversized headers on the stream port, and costly filters looped from free keys while everyone
// else keeps being answered. Asserts what users see, not timings.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSALS_LOGGED_PER_WINDOW } from '../../src/http/refusal-log.ts';
import { runCli } from '../cli/run-cli.ts';
import { openStream, type SseStream } from '../http/sse-client.ts';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const AUTH_FAILURES = 30;
const STREAMS_PER_KEY = 3;
const TOPICS = 'price:marketplacea:us';

interface Served {
  child: ChildProcess;
  apiUrl: string;
  streamUrl: string;
  /** Every stderr line so far, parsed. */
  lines: Record<string, unknown>[];
}

function serve(db: string, extra: readonly string[]): Promise<Served> {
  const child = spawn(process.execPath, [MAIN, 'serve', '--db', db, '--port', '0', '--sse-port', '0', ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  let pending = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('serve did not start')), 30_000);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const complete = pending.split('\n');
      pending = complete.pop()!;
      for (const text of complete) {
        const line = JSON.parse(text) as Record<string, unknown>;
        lines.push(line);
        if (line['msg'] === 'listening') {
          clearTimeout(timer);
          resolve({ child, apiUrl: line['apiUrl'] as string, streamUrl: line['streamUrl'] as string, lines });
        }
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  });
}

describe('catalog serve under hostile use', () => {
  let dir: string;
  let served: Served;
  let freeKey: string;
  let proKey: string;
  let productId: string;
  const streams: SseStream[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hostile-serve-'));
    const db = `sqlite:${join(dir, 'catalog.db')}`;
    const seeded = await runCli(['seed', '--db', db, '--products', '2000', '--seed', 'hostile']);
    expect(seeded.code, seeded.stderr).toBe(0);
    const keys = await Promise.all(['free', 'pro'].map((plan) => runCli(['keys', 'create', '--db', db, '--plan', plan])));
    [freeKey, proKey] = keys.map((result) => result.stdout.trim().split('\n').at(-1)!) as [string, string];
    served = await serve(db, [
      '--auth-failure-limit', String(AUTH_FAILURES),
      '--max-streams-per-key', String(STREAMS_PER_KEY),
      '--headers-timeout-ms', '1000',
      '--rate-limit', '0',
    ]);
    const page = (await (await fetch(`${served.apiUrl}/v2/variants?gtin=0000&limit=1`, { headers: { Authorization: proKey } })).json()) as { data: { product_id: string }[] };
    productId = page.data[0]!.product_id;
  }, 120_000);

  afterAll(async () => {
    for (const stream of streams) stream.close();
    served?.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a failed-authentication flood with 429 after the allowance on both ports, serves valid keys meanwhile, and logs a bounded number of lines', async () => {
    const flood = AUTH_FAILURES + 40;
    const statuses: number[] = [];
    for (let i = 0; i < flood; i++) statuses.push((await fetch(`${served.apiUrl}/gtin/count`, { headers: { Authorization: `Bearer wrong-${i}` } })).status);
    expect(statuses.slice(0, AUTH_FAILURES).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(AUTH_FAILURES).every((status) => status === 429)).toBe(true);
    const refused = await fetch(`${served.apiUrl}/gtin/count`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('x-request-id')).toBeTruthy();
    expect((await fetch(`${served.apiUrl}/gtin/count`, { headers: { Authorization: `Bearer ${freeKey}` } })).status).toBe(200);

    const streamStatuses: number[] = [];
    for (let i = 0; i < flood; i++) {
      const response = await fetch(`${served.streamUrl}/v1/stream`, { headers: { Authorization: `Bearer wrong-${i}`, Topics: TOPICS } });
      await response.body?.cancel();
      streamStatuses.push(response.status);
    }
    expect(streamStatuses.at(-1)).toBe(429);

    // Two floods of 70 refusals each: at most the sampled lines per status reached the log.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refusalLines = served.lines.filter((line) => (line['msg'] === 'request' || line['msg'] === 'stream request') && Number(line['status']) >= 400);
    expect(refusalLines.length).toBeLessThanOrEqual(2 * 2 * REFUSALS_LOGGED_PER_WINDOW);
    expect(refusalLines.some((line) => line['msg'] === 'stream request' && typeof line['request_id'] === 'string')).toBe(true);
  });

  it(`refuses a key's stream beyond ${STREAMS_PER_KEY} with 429 too_many_streams`, async () => {
    for (let i = 0; i < STREAMS_PER_KEY; i++) {
      const stream = await openStream(`${served.streamUrl}/v1/stream`, { Authorization: `Bearer ${proKey}`, Topics: TOPICS });
      streams.push(stream);
      expect(stream.status).toBe(200);
    }
    const over = await fetch(`${served.streamUrl}/v1/stream`, { headers: { Authorization: `Bearer ${proKey}`, Topics: TOPICS } });
    expect(over.status).toBe(429);
    expect(((await over.json()) as { error: string }).error).toBe('too_many_streams');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('closes a socket that never sends a request, and answers oversized headers on the stream port with 431 in the error body', async () => {
    const closedAfter = await new Promise<number>((resolve, reject) => {
      const started = performance.now();
      const socket = connect(Number(new URL(served.streamUrl).port), '127.0.0.1');
      socket.on('close', () => resolve(performance.now() - started));
      socket.on('error', reject);
      socket.resume();
    });
    expect(closedAfter).toBeLessThan(10_000);
    const big = await fetch(`${served.streamUrl}/v1/stream`, { headers: { Authorization: `Bearer ${proKey}`, Topics: TOPICS, 'X-Padding': 'x'.repeat(20_000) } });
    expect(big.status).toBe(431);
    expect(big.headers.get('x-request-id')).toBeTruthy();
    expect(((await big.json()) as { status: string }).status).toBe('error');
  });

  it('keeps answering everyone while free keys loop the costliest filters', async () => {
    const leaves = Array.from({ length: 92 }, (_, i) => `price_min >= ${i * 5}`);
    const costly = [
      `NOT (${leaves.slice(0, 46).join(' OR ')}) OR (${leaves.slice(46).join(' AND ')})`,
      `tags NOT IN [${Array.from({ length: 150 }, (_, i) => `"t${i}"`).join(',')}]`,
    ];
    let attacking = true;
    const attackStatuses = new Set<number>();
    const attackers = Array.from({ length: 4 }, async (_, a) => {
      for (let n = 0; attacking; n++) {
        const filter = costly[(a + n) % costly.length]!;
        const response = await fetch(`${served.apiUrl}/v3/storefront/products?${new URLSearchParams({ filters: filter, page: '50', sort: 'published_at:desc' })}`, {
          headers: { Authorization: freeKey },
        });
        await response.arrayBuffer();
        attackStatuses.add(response.status);
      }
    });
    const probes: number[] = [];
    for (let i = 0; i < 100; i++) probes.push((await fetch(`${served.apiUrl}/v2/products/${productId}`, { headers: { Authorization: freeKey } })).status);
    attacking = false;
    await Promise.all(attackers);
    expect(new Set(probes)).toEqual(new Set([200]));
    expect(attackStatuses).toEqual(new Set([200]));
  }, 60_000);
});
