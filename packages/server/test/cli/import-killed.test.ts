// `catalog import` killed with SIGKILL half-way (a crash, an OOM kill): every batch is a transaction,
// so the database holds whole batches only, and running the same import again completes it (it
// upserts by id): nothing is half-written, nothing is lost. The import runs as its own process,
// since the point is to kill it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { buildStorefrontProductInput } from '@catalog/contract/testing';
import { MAIN, runCli } from './run-cli.ts';

const PRODUCTS = 6_000;
const BATCH_PRODUCTS = 2_000;

describe('catalog import', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('leaves whole batches only when killed with SIGKILL, and a second run completes it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'cli-import-killed-'));
    const file = join(dir, 'storefront.ndjson');
    writeFileSync(file, `${Array.from({ length: PRODUCTS }, () => JSON.stringify(buildStorefrontProductInput())).join('\n')}\n`);
    const db = `sqlite:${join(dir, 'catalog.db')}`;
    const count = async (): Promise<number> => {
      const stores = await openCatalogStores(db, silentLogger);
      try {
        return (await stores.catalog.listStorefrontDocuments({ sort: 'cursor:asc', offset: 0, limit: 1 })).total;
      } finally {
        await stores.close();
      }
    };
    /** Rows committed so far, read without opening the stores (cheap enough to poll). */
    const committed = (): number => {
      try {
        const reader = new DatabaseSync(join(dir, 'catalog.db'), { readOnly: true });
        try {
          return (reader.prepare('SELECT count(*) AS n FROM storefront_products').get() as { n: number }).n;
        } finally {
          reader.close();
        }
      } catch {
        return 0;
      }
    };

    const child = spawn(process.execPath, [MAIN, 'import', '--db', db, '--kind', 'storefront', file], { stdio: 'ignore' });
    // Killed once some batches are in, well before the end.
    await expect.poll(committed, { timeout: 20_000, interval: 20 }).toBeGreaterThan(0);
    child.kill('SIGKILL');
    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
    expect([code, signal]).toEqual([null, 'SIGKILL']);
    const imported = await count();
    expect(imported).toBeLessThan(PRODUCTS);
    expect(imported % BATCH_PRODUCTS).toBe(0);

    const again = await runCli(['import', '--db', db, '--kind', 'storefront', file]);
    expect(again.code).toBe(0);
    expect(await count()).toBe(PRODUCTS);
  }, 60_000);
});
