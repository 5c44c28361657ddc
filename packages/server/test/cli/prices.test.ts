import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { openPriceLog } from '../../src/prices/open-price-log.ts';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import { buildPriceEvent } from '@catalog/contract/testing';

const SERVER_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function catalog(args: string[], options: { input?: string; env?: Record<string, string> } = {}): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['src/cli/main.ts', ...args], {
    cwd: SERVER_DIR,
    input: options.input ?? '',
    encoding: 'utf8',
    env: { ...process.env, ...options.env },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('prices publish', () => {
  let dir: string;
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('appends valid lines exactly as written, reports bad lines by number and exits 1', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prices-cli-'));
    const good = JSON.stringify(buildPriceEvent({ sku: 'Ünïcödé' })).replace('189.99', '189.90');
    const file = path.join(dir, 'events.ndjson');
    fs.writeFileSync(file, [good, '{"source":"marketplacea"}', '', 'not json', JSON.stringify(buildPriceEvent({ market: 'NL', source: 'marketplaceb' }))].join('\n'));
    const url = `sqlite:${path.join(dir, 'nested', 'prices.db')}`;
    const result = catalog(['prices', 'publish', '--price-log', url, file]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^line 2: the event must have required property 'product_id'; skipped$/m);
    expect(result.stderr).toMatch(/^line 4: not valid JSON/m);
    const log = new SqlitePriceLog(path.join(dir, 'nested', 'prices.db'));
    const stored = await log.readAfter(0, 10);
    await log.close();
    expect(result.stdout).toBe(`published 2 price events (ids ${stored[0]?.id}–${stored[1]?.id}); 2 bad lines skipped\n`);
    expect(stored.map((event) => [event.topic, event.data])).toEqual([
      ['price:marketplacea:us', good],
      ['price:marketplaceb:nl', expect.stringContaining('"market":"NL"')],
    ]);
  });

  it('reads stdin and takes the price log from PRICE_LOG_URL', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prices-cli-'));
    const input = `${JSON.stringify(buildPriceEvent())}\n`.repeat(3);
    // A log that already counts from 0 (a new one counts from its creation time).
    await new SqlitePriceLog(path.join(dir, 'p.db'), { newLogCounter: 0 }).close();
    const result = catalog(['prices', 'publish', '-'], { input, env: { PRICE_LOG_URL: `sqlite:${path.join(dir, 'p.db')}` } });
    expect([result.status, result.stdout]).toEqual([0, 'published 3 price events (ids 1–3); 0 bad lines skipped\n']);
  });
});

describe('openPriceLog', () => {
  it('refuses an unknown scheme', async () => {
    await expect(openPriceLog('kafka://x', silentLogger)).rejects.toThrow(/must start with sqlite: or redis:/);
  });
});
