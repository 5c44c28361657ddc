// SqliteKeyStore: the KeyStore port on node:sqlite. Only SHA-256 digests of keys are stored; a key
// is found by its digest through the primary key, then confirmed with a constant-time comparison.
// A revoked key is never found again. Failure modes: ServiceUnavailable once the database is closed.
import type { Plan } from '../../catalog/model.ts';
import {
  digestKey,
  digestsEqual,
  generateApiKey,
  idPrefixOf,
  keyIdOf,
  LAST_USED_PRECISION_MS,
  type KeyAdministration,
  type KeyInfo,
} from '../key-store.ts';
import type { SqliteDatabase } from './sqlite-database.ts';
import { BUSY_TIMEOUT_MS } from './sqlite-settings.ts';

interface KeyRow {
  digest: Uint8Array;
  plan: Plan;
  label: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export class SqliteKeyStore implements KeyAdministration {
  private readonly database: SqliteDatabase;

  constructor(database: SqliteDatabase) {
    this.database = database;
  }

  async createKey(plan: Plan, label?: string): Promise<string> {
    const key = generateApiKey();
    this.database
      .statement('INSERT INTO api_keys (digest, plan, label, created_at) VALUES (?, ?, ?, ?)')
      .run(digestKey(key), plan, label ?? null, new Date().toISOString());
    return key;
  }

  async findPlan(key: string): Promise<Plan | null> {
    const digest = digestKey(key);
    const row = this.database.statement('SELECT digest, plan, last_used_at, revoked_at FROM api_keys WHERE digest = ?').get(digest) as
      | Pick<KeyRow, 'digest' | 'plan' | 'last_used_at' | 'revoked_at'>
      | undefined;
    if (row === undefined || !digestsEqual(row.digest, digest) || row.revoked_at !== null) return null;
    const now = Date.now();
    if (row.last_used_at === null || now - Date.parse(row.last_used_at) >= LAST_USED_PRECISION_MS) this.#touch(digest, now);
    return row.plan;
  }

  /**
   * Records the key's use, best effort: without waiting for another writer (an import holds the
   * write lock for a batch, and node:sqlite would wait on this thread), so a busy moment skips
   * the record until the next look-up.
   */
  #touch(digest: Buffer, now: number): void {
    const db = this.database.connection();
    db.exec('PRAGMA busy_timeout = 0');
    try {
      this.database.statement('UPDATE api_keys SET last_used_at = ? WHERE digest = ?').run(new Date(now).toISOString(), digest);
    } catch {
      // Busy: another process is writing; the next look-up records it.
    } finally {
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  async listKeys(): Promise<KeyInfo[]> {
    const rows = this.database.statement('SELECT digest, plan, label, created_at, last_used_at, revoked_at FROM api_keys ORDER BY created_at, digest').all() as unknown as KeyRow[];
    return rows.map(infoOf);
  }

  async revokeKey(keyOrId: string): Promise<KeyInfo | null> {
    const prefix = idPrefixOf(keyOrId);
    const rows = (
      prefix === null
        ? this.database.statement('SELECT digest, plan, label, created_at, last_used_at, revoked_at FROM api_keys WHERE digest = ?').all(digestKey(keyOrId))
        : this.database.statement("SELECT digest, plan, label, created_at, last_used_at, revoked_at FROM api_keys WHERE hex(digest) LIKE ? || '%'").all(prefix.toUpperCase())
    ) as unknown as KeyRow[];
    const [row] = rows;
    if (row === undefined || rows.length > 1) return null;
    const revokedAt = row.revoked_at ?? new Date().toISOString();
    this.database.statement('UPDATE api_keys SET revoked_at = ? WHERE digest = ?').run(revokedAt, row.digest);
    return infoOf({ ...row, revoked_at: revokedAt });
  }
}

function infoOf(row: KeyRow): KeyInfo {
  return { id: keyIdOf(row.digest), label: row.label, plan: row.plan, createdAt: row.created_at, lastUsedAt: row.last_used_at, revokedAt: row.revoked_at };
}
