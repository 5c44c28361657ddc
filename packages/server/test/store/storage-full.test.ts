// The one rule for "the storage is full", fed the errors the engines and the file system really
// raise: SQLite's SQLITE_FULL (a database at its max_page_count fails exactly as on a full disk)
// and ENOSPC (writing to /dev/full).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StorageFull } from '../../src/catalog/errors.ts';
import { isStorageFull, storageFullError } from '../../src/store/storage-full.ts';

function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('storageFullError', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'storage-full-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("names the disk that holds a SQLite database which cannot grow, with the engine's reason", () => {
    const file = join(dir, 'catalog.db');
    const db = new DatabaseSync(file);
    db.exec('CREATE TABLE t (x BLOB)');
    const { page_count: pages } = db.prepare('PRAGMA page_count').get() as { page_count: number };
    db.exec(`PRAGMA max_page_count = ${pages + 2}`);
    const error = thrown(() => db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(1 << 20)));
    db.close();
    const full = storageFullError('catalog database', file, error);
    expect(full).toBeInstanceOf(StorageFull);
    expect(full?.message).toMatch(new RegExp(`^The catalog database cannot be written: the disk mounted at /\\S* \\(.+ free\\), holding ${file} is full \\(database or disk is full\\)\\.`, 'u'));
  });

  it('tells a file system that has no space left (ENOSPC), also as the cause of another error', () => {
    const error = thrown(() => writeFileSync('/dev/full', 'x'));
    expect(isStorageFull(error)).toBe(true);
    expect(isStorageFull(new Error('price log unavailable', { cause: error }))).toBe(true);
  });

  it('leaves other failures alone', () => {
    const db = new DatabaseSync(':memory:');
    db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)');
    db.exec('INSERT INTO t VALUES (1)');
    const constraint = thrown(() => db.exec('INSERT INTO t VALUES (1)'));
    db.close();
    expect(storageFullError('catalog database', join(dir, 'catalog.db'), constraint)).toBeNull();
    expect(storageFullError('price log', undefined, new Error('connection refused'))).toBeNull();
  });
});
