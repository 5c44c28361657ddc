import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { silentLogger } from '../src/logger.ts';
import { SqlitePriceLog } from '../src/prices/sqlite/sqlite-price-log.ts';
import { openKeyStore } from '../src/store/open-store.ts';
import { startStreamThread } from '../src/stream-thread.ts';
import { openStream } from './http/sse-client.ts';
import { eventOnTopic, TOPICS } from './prices/builders.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(): Promise<{ dir: string; proKey: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stream-thread-'));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const store = await openKeyStore(`sqlite:${path.join(dir, 'catalog.db')}`, silentLogger);
  const proKey = await store.keys.createKey('pro');
  await store.close();
  return { dir, proKey };
}

const configFor = (dir: string, priceLog: string) =>
  loadConfig(['--db', `sqlite:${path.join(dir, 'catalog.db')}`, '--price-log', priceLog, '--host', '127.0.0.1', '--port', '0', '--sse-port', '0', '--log-level', 'error'], {});

describe('the stream thread', () => {
  it('serves the stream from its own thread, and close() ends every stream cleanly', async () => {
    const { dir, proKey } = await setUp();
    const logFile = path.join(dir, 'prices.db');
    const thread = await startStreamThread(configFor(dir, `sqlite:${logFile}`), silentLogger);
    let failed = false;
    void thread.failed.then(() => (failed = true));
    const stream = await openStream(`${thread.url}/v1/stream`, { Authorization: `Bearer ${proKey}`, Topics: TOPICS[0] });
    cleanups.push(async () => stream.close());
    expect(stream.status).toBe(200);

    const log = new SqlitePriceLog(logFile);
    cleanups.push(() => log.close());
    const [stored] = await log.append([eventOnTopic(TOPICS[0])]);
    const frames = await stream.frames(2);
    expect(frames[1]).toMatchObject({ id: String(stored?.id), event: TOPICS[0], data: stored?.data });

    await thread.close();
    expect(await stream.ended()).toBe('end');
    expect(failed).toBe(false);
  });

  it('rejects the start with the reason when the thread cannot open its price log', async () => {
    const { dir } = await setUp();
    const blocker = path.join(dir, 'not-a-directory');
    fs.writeFileSync(blocker, '');
    await expect(startStreamThread(configFor(dir, `sqlite:${path.join(blocker, 'prices.db')}`), silentLogger)).rejects.toThrow(/not-a-directory/);
  });
});
