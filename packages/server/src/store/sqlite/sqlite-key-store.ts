// SqliteKeyStore: the KeyStore port on node:sqlite. Only SHA-256 digests of keys are stored; a key
// is found by its digest through the primary key, then confirmed with a constant-time comparison.
// Failure modes: ServiceUnavailable once the database is closed.
import type { Plan } from '../../catalog/model.ts';
import { digestKey, digestsEqual, generateApiKey, type KeyStore } from '../key-store.ts';
import type { SqliteDatabase } from './sqlite-database.ts';

export class SqliteKeyStore implements KeyStore {
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
    const row = this.database.statement('SELECT digest, plan FROM api_keys WHERE digest = ?').get(digest) as
      | { digest: Uint8Array; plan: Plan }
      | undefined;
    return row !== undefined && digestsEqual(row.digest, digest) ? row.plan : null;
  }
}
