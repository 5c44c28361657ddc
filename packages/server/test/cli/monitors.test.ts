import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run as keysCommand } from '../../src/cli/keys.ts';
import { run as monitorsCommand } from '../../src/cli/monitors.ts';
import { silentLogger } from '../../src/logger.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { runCli, runInProcess } from './run-cli.ts';

describe('catalog monitors', () => {
  let dir: string;
  let db: string;
  let proKey: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cli-monitors-'));
    db = `sqlite:${join(dir, 'catalog.db')}`;
    proKey = (await runInProcess(keysCommand, ['create', '--db', db, '--plan', 'pro'])).stdout.trim();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const add = (...args: string[]) =>
    runInProcess(monitorsCommand, ['add', '--db', db, '--key', proKey, '--url', 'https://hooks.example.com/prices', '--filter', 'product_id IN ["p1", "p2"] AND market = "US"', ...args]);

  const stored = async () => {
    const stores = await openCatalogStores(db, silentLogger);
    try {
      return await stores.monitors.listMonitors();
    } finally {
      await stores.close();
    }
  };

  it('adds a monitor and prints its id, then its whsec_ secret as the last line of stdout', async () => {
    const result = await runCli(['monitors', 'add', '--db', db, '--key', proKey, '--url', 'https://hooks.example.com/prices', '--filter', 'market = "US"', '--min-change-percent', '2.5', '--min-interval', '60']);
    expect(result.code).toBe(0);
    const [id, secret] = result.stdout.trimEnd().split('\n');
    expect(secret).toMatch(/^whsec_/);
    expect(result.stderr).toContain('shown only once');
    expect(await stored()).toMatchObject([{ id, minChangePercent: 2.5, minIntervalMs: 60_000, enabled: true }]);
    // It starts at the price log's newest event (the log in the same file is empty: 0).
    const stores = await openCatalogStores(db, silentLogger);
    expect((await stores.monitors.readerStates())[0]?.position).toBe(0);
    await stores.close();
    const listed = await runInProcess(monitorsCommand, ['list', '--db', db]);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).not.toContain(secret);
  });

  it.each([
    [['--url', 'http://hooks.example.com/prices'], '--url must be an https:// URL'],
    [['--url', 'not a url'], 'is not an absolute URL'],
    [['--filter', 'product_id ==='], '--filter: Invalid filter at position'],
    [['--filter', 'brand = "Nike"'], '--filter: Invalid filter'],
    [['--min-change-percent', '-1'], '--min-change-percent must be a number'],
    [['--min-interval', '1.5'], '--min-interval must be an integer from 0 to 86400'],
  ])('refuses %j with a clear message and stores nothing', async (args, message) => {
    const result = await add(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('nothing was stored');
    expect(await stored()).toEqual([]);
  });

  it('refuses a free key and stores nothing', async () => {
    proKey = (await runInProcess(keysCommand, ['create', '--db', db, '--plan', 'free'])).stdout.trim();
    const result = await add();
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain('monitors need a pro key');
    expect(await stored()).toEqual([]);
  });

  it('accepts http:// with --allow-http, then removes and enables by id', async () => {
    const added = await add('--url', 'http://127.0.0.1:9/hook', '--allow-http');
    expect(added.code).toBe(0);
    const id = added.stdout.split('\n')[0]!;
    expect((await runInProcess(monitorsCommand, ['enable', '--db', db, id])).code).toBe(0);
    expect((await runInProcess(monitorsCommand, ['remove', '--db', db, id])).code).toBe(0);
    const again = await runInProcess(monitorsCommand, ['remove', '--db', db, id]);
    expect(again).toMatchObject({ code: 1 });
    expect(again.stderr).toContain(`no monitor ${id}`);
  });
});
