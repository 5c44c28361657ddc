// `prices publish` against a Redis of the test's own that is killed and restarted (empty) under a
// long-running publisher: batches the log refuses are retried in order, nothing that arrives after
// recovery is lost, and what could not be stored is said at once on stderr, with exit status 1.
// The publisher runs in-process, reading a FIFO the test writes to as a producer would.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli/prices.ts';
import { buildPriceEvent } from '@catalog/contract/testing';
import { startRedisServer, type TestRedisServer } from '../support/redis-test-server.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Publisher {
  write(count: number, from: number): void;
  end(): void;
  exit: Promise<number>;
  stderr: () => string;
  stdout: () => string;
  /** The `sku`s stored in the log, in log order. */
  stored: () => Promise<string[]>;
}

async function startPublisher(server: TestRedisServer, extra: string[] = []): Promise<Publisher> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'publish-faults-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const fifo = path.join(dir, 'events');
  execFileSync('mkfifo', [fifo]);
  let stderr = '';
  let stdout = '';
  const errors = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const outs = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  cleanups.push(() => {
    errors.mockRestore();
    outs.mockRestore();
  });
  const prefix = `test:${Date.now()}:`;
  const exit = run(['publish', '--price-log', `${server.url}?prefix=${encodeURIComponent(prefix)}`, ...extra, fifo]);
  const input = fs.createWriteStream(fifo);
  const reader = new Redis(server.url, { maxRetriesPerRequest: 1 });
  reader.on('error', () => {});
  cleanups.push(() => reader.disconnect());
  return {
    write: (count, from) => {
      for (let i = from; i < from + count; i++) input.write(`${JSON.stringify(buildPriceEvent({ sku: `sku-${i}` }))}\n`);
    },
    end: () => input.end(),
    exit,
    stderr: () => stderr,
    stdout: () => stdout,
    stored: async () => {
      const entries = (await reader.xrange(`${prefix}stream`, '-', '+')) as [string, string[]][];
      return entries.map(([, fields]) => (JSON.parse(fields[fields.indexOf('d') + 1]!) as { sku: string }).sku);
    },
  };
}

const skus = (from: number, count: number): string[] => Array.from({ length: count }, (_, i) => `sku-${from + i}`);

describe('prices publish', () => {
  it('retries batches in order while Redis restarts, and stores everything written during and after the outage', async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.stop());
    const publisher = await startPublisher(server, ['--retry-for-ms', '10000']);
    publisher.write(50, 0);
    await expect.poll(publisher.stored, { timeout: 5_000 }).toHaveLength(50);
    await server.kill();
    publisher.write(50, 50);
    await expect.poll(publisher.stderr, { timeout: 5_000 }).toMatch(/^lines? 51(–\d+)?: not stored yet \(.+\); retrying for up to 10000 ms$/mu);
    await server.restart();
    publisher.write(50, 100);
    publisher.end();
    expect(await publisher.exit).toBe(0);
    // The restarted Redis lost the first 50; the publisher lost nothing.
    expect(await publisher.stored()).toEqual(skus(50, 100));
    expect(publisher.stderr()).toMatch(/stored after \d+ retr/u);
  });

  it('says at once which lines it could not store, goes on with the lines after recovery, and exits 1', async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.stop());
    // Long enough for the client to reconnect after the restart on a loaded machine, so the lines
    // written after recovery are stored; short enough to give up on the outage's lines.
    const publisher = await startPublisher(server, ['--retry-for-ms', '1500']);
    publisher.write(10, 0);
    await expect.poll(publisher.stored, { timeout: 5_000 }).toHaveLength(10);
    await server.kill();
    publisher.write(10, 10);
    // Said before the input ends, by line numbers.
    await expect.poll(publisher.stderr, { timeout: 5_000 }).toMatch(/^lines? (\d+–)?20: NOT stored \(.+\); gave up after 1500 ms/mu);
    await server.restart();
    publisher.write(10, 20);
    await expect.poll(publisher.stored, { timeout: 5_000 }).toEqual(skus(20, 10));
    publisher.end();
    expect(await publisher.exit).toBe(1);
    expect(publisher.stdout()).toMatch(/^published 20 price events .*; 10 events NOT stored \(see above\)$/mu);
  });
});
