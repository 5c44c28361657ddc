import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildStorefrontProductInput } from '@catalog/contract/testing';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import { createLogger, silentLogger } from '../../src/logger.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { DocumentReaders } from '../../src/store/sqlite/document-readers.ts';
import { SqliteDatabase } from '../../src/store/sqlite/sqlite-database.ts';
import { cursorList, readStorefrontPage, STOREFRONT_PAGE_SQL } from '../../src/store/sqlite/storefront-pages.ts';
import type { IndexedCatalogStore } from '../../src/store/indexed-catalog-store.ts';

const root = mkdtempSync(join(tmpdir(), 'document-readers-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');

/** A catalog of `count` storefront products at `path`, its cursors, and its own reads of a page (counted). */
async function catalogAt(path: string, count: number) {
  const stores = await openCatalogStores(`sqlite:${path}`, silentLogger);
  await stores.catalog.upsertStorefrontProducts(Array.from({ length: count }, (_, i) => buildStorefrontProductInput({ title: `Shoe ${i} “é”` })));
  const cursors = (await (stores.catalog as IndexedCatalogStore).engine.storefrontRowsByCursor(0, count)).map((row) => row.cursor);
  const database = new SqliteDatabase(path);
  const here = { reads: 0 };
  const readHere = (list: string): Uint8Array => {
    here.reads += 1;
    return readStorefrontPage(database.statement(STOREFRONT_PAGE_SQL), list);
  };
  return { cursors, readHere, here, close: async () => (database.close(), await stores.close()) };
}

describe('DocumentReaders', () => {
  it("answers many reads in flight over two threads with the bytes the API thread reads itself, each read's own page, none read here", async () => {
    const path = join(root, 'pages.db');
    const catalog = await catalogAt(path, 60);
    const { cursors } = catalog;
    const readers = new DocumentReaders(path, 2, silentLogger, catalog.readHere);
    try {
      const pages = Array.from({ length: 40 }, (_, i) => cursorList([cursors[(i * 7) % 60]!, cursors[(i * 13 + 1) % 60]!, cursors[59 - (i % 60)]!]));
      const answers = await Promise.all(pages.map((page) => readers.read(page)));
      expect(catalog.here.reads).toBe(0);
      answers.forEach((answer, i) => expect(text(answer)).toBe(text(catalog.readHere(pages[i]!))));
      expect(JSON.parse(text(answers[3]!)).map((product: { cursor: number }) => product.cursor)).toStrictEqual([cursors[21], cursors[40], cursors[56]]);
    } finally {
      await readers.close();
      await catalog.close();
    }
  });

  it('fails a read SQLite refuses with ServiceUnavailable, and reads on', async () => {
    const path = join(root, 'refused.db');
    const catalog = await catalogAt(path, 1);
    const readers = new DocumentReaders(path, 1, silentLogger, catalog.readHere);
    try {
      await expect(readers.read('[not json')).rejects.toBeInstanceOf(ServiceUnavailable);
      expect(text(await readers.read(cursorList(catalog.cursors)))).toBe(text(catalog.readHere(cursorList(catalog.cursors))));
    } finally {
      await readers.close();
      await catalog.close();
    }
  });

  it('fails the reads in flight with ServiceUnavailable on close, and every read after it', async () => {
    const path = join(root, 'closed.db');
    const catalog = await catalogAt(path, 1);
    const readers = new DocumentReaders(path, 1, silentLogger, catalog.readHere);
    const inFlight = Promise.allSettled(Array.from({ length: 20 }, () => readers.read('[1,2,3]')));
    await readers.close();
    for (const read of await inFlight) expect(read.status === 'rejected' && read.reason instanceof ServiceUnavailable).toBe(true);
    await expect(readers.read('[1]')).rejects.toBeInstanceOf(ServiceUnavailable);
    expect(catalog.here.reads).toBe(0);
    await catalog.close();
  });

  it('reads here when its threads cannot open the file, says so once in the log, and reads here with no threads asked for', async () => {
    const catalog = await catalogAt(join(root, 'here.db'), 3);
    const lines: string[] = [];
    const logger = createLogger({ write: (line) => void lines.push(line) });
    const missing = new DocumentReaders(join(root, 'missing', 'catalog.db'), 2, logger, catalog.readHere);
    const list = cursorList(catalog.cursors);
    const expected = text(catalog.readHere(list));
    catalog.here.reads = 0;
    for (let i = 0; i < 3; i += 1) expect(text(await missing.read(list))).toBe(expected);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(text(await missing.read(list))).toBe(expected);
    expect(catalog.here.reads).toBe(4);
    expect(lines.map((line) => JSON.parse(line) as { level: string; msg: string }).filter((line) => line.level === 'error')).toMatchObject([{ msg: expect.stringMatching(/could not start/) }]);
    await missing.close();
    const none = new DocumentReaders(join(root, 'here.db'), 0, logger, catalog.readHere);
    expect(text(await none.read(list))).toBe(expected);
    expect(catalog.here.reads).toBe(5);
    await none.close();
    await catalog.close();
  });
});
