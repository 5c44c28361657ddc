import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildStorefrontProductInput } from '@catalog/contract/testing';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import { silentLogger } from '../../src/logger.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { DocumentReaders } from '../../src/store/sqlite/document-readers.ts';
import { SqliteDatabase } from '../../src/store/sqlite/sqlite-database.ts';
import { cursorList, readStorefrontPage, STOREFRONT_PAGE_SQL } from '../../src/store/sqlite/storefront-pages.ts';
import type { IndexedCatalogStore } from '../../src/store/indexed-catalog-store.ts';

const root = mkdtempSync(join(tmpdir(), 'document-readers-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');

describe('DocumentReaders', () => {
  it("answers many reads in flight over two threads with the bytes the API thread reads itself, each read's own page", async () => {
    const path = join(root, 'pages.db');
    const stores = await openCatalogStores(`sqlite:${path}`, silentLogger);
    await stores.catalog.upsertStorefrontProducts(Array.from({ length: 60 }, (_, i) => buildStorefrontProductInput({ title: `Shoe ${i} “é”` })));
    const cursors = (await (stores.catalog as IndexedCatalogStore).engine.storefrontRowsByCursor(0, 100)).map((row) => row.cursor);
    const database = new SqliteDatabase(path);
    const readers = await DocumentReaders.start(path, 2, silentLogger);
    try {
      const pages = Array.from({ length: 40 }, (_, i) => cursorList([cursors[(i * 7) % 60]!, cursors[(i * 13 + 1) % 60]!, cursors[59 - (i % 60)]!]));
      const answers = await Promise.all(pages.map((page) => readers.read(page)!));
      answers.forEach((answer, i) => expect(text(answer)).toBe(text(readStorefrontPage(database.statement(STOREFRONT_PAGE_SQL), pages[i]!))));
      expect(JSON.parse(text(answers[3]!)).map((product: { cursor: number }) => product.cursor)).toStrictEqual([cursors[21], cursors[40], cursors[56]]);
    } finally {
      await readers.close();
      database.close();
      await stores.close();
    }
  });

  it('fails a read SQLite refuses with ServiceUnavailable, and reads on', async () => {
    const path = join(root, 'refused.db');
    const stores = await openCatalogStores(`sqlite:${path}`, silentLogger);
    const readers = await DocumentReaders.start(path, 1, silentLogger);
    try {
      await expect(readers.read('[not json')!).rejects.toBeInstanceOf(ServiceUnavailable);
      expect(text(await readers.read('[1]')!)).toBe('[]');
    } finally {
      await readers.close();
      await stores.close();
    }
  });

  it('fails the reads in flight with ServiceUnavailable on close, and leaves later reads to the caller', async () => {
    const path = join(root, 'closed.db');
    const stores = await openCatalogStores(`sqlite:${path}`, silentLogger);
    const readers = await DocumentReaders.start(path, 1, silentLogger);
    const inFlight = Promise.allSettled(Array.from({ length: 20 }, () => readers.read('[1,2,3]')!));
    await readers.close();
    for (const read of await inFlight) expect(read.status === 'rejected' && read.reason instanceof ServiceUnavailable).toBe(true);
    expect(readers.read('[1]')).toBeUndefined();
    await stores.close();
  });

  it('refuses to start on a file that is not a database, with the reason', async () => {
    await expect(DocumentReaders.start(join(root, 'missing', 'catalog.db'), 1, silentLogger)).rejects.toThrow(/unable to open|no such|database/i);
  });
});
