import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/cli/command-line.ts';
import { silentLogger } from '../src/logger.ts';
import { startMonitorThread } from '../src/monitor-thread.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function configIn(priceLog: (dir: string) => string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-thread-'));
  dirs.push(dir);
  return loadConfig(['--db', `sqlite:${path.join(dir, 'catalog.db')}`, '--price-log', priceLog(dir), '--port', '0', '--sse-port', '0', '--log-level', 'error'], {});
}

describe('the monitor threads', () => {
  it('runs the reader and the sender in threads of their own, reports their metrics once, and close() lets both exit', async () => {
    const thread = await startMonitorThread(configIn((dir) => `sqlite:${path.join(dir, 'prices.db')}`), silentLogger);
    let failed = false;
    void thread.failed.then(() => (failed = true));
    const names = (await thread.metrics()).map((metric) => metric.name);
    expect(names).toEqual(expect.arrayContaining(['catalog_monitor_deliveries_total', 'catalog_monitor_backlog']));
    // The two threads' registries merged: each metric once.
    expect(new Set(names).size).toBe(names.length);
    await thread.close();
    expect(await thread.metrics()).toEqual([]);
    expect(failed).toBe(false);
  });

  it('rejects the start with the reason when the reader cannot open its price log', async () => {
    const config = configIn((dir) => {
      fs.writeFileSync(path.join(dir, 'not-a-directory'), '');
      return `sqlite:${path.join(dir, 'not-a-directory', 'prices.db')}`;
    });
    await expect(startMonitorThread(config, silentLogger)).rejects.toThrow(/not-a-directory/);
  });
});
