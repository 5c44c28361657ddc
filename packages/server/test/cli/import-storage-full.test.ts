// `catalog import` into a SQLite database that cannot grow: SQLite answers SQLITE_FULL exactly as
// for a full disk (here at its max_page_count, which the test sets), and the import stops at the
// first refused write with one message naming the disk, instead of one error per line, and stops
// reading the file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli/import.ts';
import { IndexedCatalogStore } from '../../src/store/indexed-catalog-store.ts';
import type { CatalogStores } from '../../src/store/open-store.ts';
import { SqliteCatalogStore } from '../../src/store/sqlite/sqlite-catalog-store.ts';
import { SqliteDatabase } from '../../src/store/sqlite/sqlite-database.ts';
import { SqliteKeyStore } from '../../src/store/sqlite/sqlite-key-store.ts';
import { SqliteMonitorStore } from '../../src/store/sqlite/sqlite-monitor-store.ts';
import { sqlitePath } from '../../src/storage-url.ts';
import { buildCatalogProduct } from '@catalog/contract/testing';

/** The SQLite stores with the database allowed `extraPages` pages beyond what it holds now. */
function storesWithRoomFor(extraPages: number): (url: string) => Promise<CatalogStores> {
  return async (url) => {
    const database = new SqliteDatabase(sqlitePath(url));
    const { page_count: pages } = database.connection().prepare('PRAGMA page_count').get() as { page_count: number };
    database.connection().exec(`PRAGMA max_page_count = ${pages + extraPages}`);
    const catalog = new SqliteCatalogStore(database);
    return { catalog: new IndexedCatalogStore(catalog), keys: new SqliteKeyStore(database), monitors: new SqliteMonitorStore(database), close: () => catalog.close() };
  };
}

describe('catalog import', () => {
  let dir: string;
  let output: { stdout: string; stderr: string };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-import-full-'));
    output = { stdout: '', stderr: '' };
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((output.stdout += String(chunk)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((output.stderr += String(chunk)), true));
  });
  afterEach(() => {
    vi.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops at the first write the full storage refuses, with one message naming the disk, and stops reading', async () => {
    const lines = 20_000;
    const file = join(dir, 'catalog.ndjson');
    writeFileSync(file, `${Array.from({ length: lines }, () => JSON.stringify(buildCatalogProduct())).join('\n')}\n`);
    const db = `sqlite:${join(dir, 'catalog.db')}`;
    const code = await run(['--db', db, '--kind', 'catalog', file], { openStores: storesWithRoomFor(200) });
    expect(code).toBe(1);
    const messages = output.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('\r'));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(new RegExp(`^${file}:\\d+: import stopped: The catalog database cannot be written: the disk mounted at /\\S* \\(.+ free\\), holding ${join(dir, 'catalog.db')} is full \\(database or disk is full\\)\\.`, 'u'));
    const stoppedAt = Number(/:(\d+): import stopped/u.exec(messages[0]!)?.[1]);
    // Reading stopped within a batch or two of the refused write.
    expect(stoppedAt).toBeLessThan(lines - 4_000);
    expect(output.stdout).toMatch(/stopped early: storage full\n$/u);
  });
});
