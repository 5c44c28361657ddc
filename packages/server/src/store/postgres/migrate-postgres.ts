// Applies POSTGRES_MIGRATIONS that are not yet recorded in `schema_migrations`. Instances starting
// together serialise on an advisory lock, so each migration runs exactly once.
import type pg from 'pg';
import type { Logger } from '../../logger.ts';
import { POSTGRES_MIGRATIONS, type Migration } from './migrations.ts';

const LOCK_KEY = 'catalog.schema_migrations';

/** Returns the versions applied by this call (empty when the schema was current). */
export async function migratePostgres(pool: pg.Pool, logger: Logger, migrations: readonly Migration[] = POSTGRES_MIGRATIONS): Promise<number[]> {
  const client = await pool.connect();
  const applied: number[] = [];
  let ok = false;
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [LOCK_KEY]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(rows.map((row) => row.version));
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(migration.version)) continue;
      logger.info('applying migration', { version: migration.version, name: migration.name });
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await migration.migrateData?.(client);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      }
      applied.push(migration.version);
    }
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [LOCK_KEY]);
    ok = true;
    return applied;
  } finally {
    // A failed run may still hold the session-level lock: discard that connection.
    client.release(!ok);
  }
}
