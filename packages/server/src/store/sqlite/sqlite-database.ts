// One node:sqlite connection with the settings every SQLite adapter relies on: WAL (readers never
// block the importer), synchronous=NORMAL (durable at checkpoints; a power cut may lose the last
// transactions, never corrupt), a busy timeout so a second process waits instead of failing, and a
// bounded cache of prepared statements. Calls are synchronous: they block the event loop for as long
// as the query runs, which is why every query here is index-backed.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { ServiceUnavailable } from '../../catalog/errors.ts';
import { migrateSqlite } from './migrations.ts';
import { applyCatalogReadSettings, BUSY_TIMEOUT_MS } from './sqlite-settings.ts';

const STATEMENT_CACHE_LIMIT = 256;
/**
 * How long a read of PRAGMA data_version stands for others, so that requests do not each ask
 * SQLite: another process's commit is seen by cached reads within this long.
 */
export const DATA_VERSION_RECHECK_MS = 1;

export class SqliteDatabase {
  readonly path: string;
  private db: DatabaseSync | undefined;
  private readonly statements = new Map<string, StatementSync>();
  /** Bumped on every local write; combined with PRAGMA data_version to detect other writers. */
  private localWrites = 0;
  private dataVersion = 0;
  private dataVersionReadAt = -Infinity;

  constructor(path: string) {
    this.path = path;
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const db = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
    // Large pages hold a whole product document (a few KB) without overflow chains; only takes effect on a new file.
    db.exec('PRAGMA page_size = 16384');
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    // Checkpoint every ~64 MiB of WAL rather than 16 MiB: a bulk import rewrites hot index pages far less often.
    db.exec('PRAGMA wal_autocheckpoint = 4096');
    applyCatalogReadSettings(db);
    migrateSqlite(db);
    this.db = db;
  }

  /** The open connection; ServiceUnavailable once closed. */
  connection(): DatabaseSync {
    if (this.db === undefined || !this.db.isOpen) throw new ServiceUnavailable('catalog database');
    return this.db;
  }

  /** A cached prepared statement for this exact SQL text. */
  statement(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      if (this.statements.size >= STATEMENT_CACHE_LIMIT) this.statements.clear();
      statement = this.connection().prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `work` in one IMMEDIATE transaction (one writer at a time across processes). */
  transaction<T>(work: () => T): T {
    const db = this.connection();
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      db.exec('COMMIT');
      this.localWrites += 1;
      return result;
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }

  /**
   * Changes whenever this connection has committed, and within DATA_VERSION_RECHECK_MS of
   * another connection's commit, since the last call returned it.
   */
  version(): string {
    const now = performance.now();
    if (now - this.dataVersionReadAt >= DATA_VERSION_RECHECK_MS) {
      this.dataVersion = (this.statement('PRAGMA data_version').get() as { data_version: number }).data_version;
      this.dataVersionReadAt = now;
    }
    return `${this.dataVersion}:${this.localWrites}`;
  }

  close(): void {
    this.statements.clear();
    if (this.db?.isOpen === true) this.db.close();
    this.db = undefined;
  }
}
