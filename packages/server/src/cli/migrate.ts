// `catalog migrate --db <url>`: applies pending schema migrations (SQLite or PostgreSQL) and says
// where the schema stands. Opening a store also migrates; this command lets operators migrate
// ahead of a roll-out, or check that nothing is pending.
import { validateStorageUrl } from '../config.ts';
import { createLogger } from '../logger.ts';
import { sqlitePath } from '../storage-url.ts';
import { migratePostgres } from '../store/postgres/migrate-postgres.ts';
import { POSTGRES_MIGRATIONS, VARIANT_SEARCH_INDEXES } from '../store/postgres/migrations.ts';
import { PostgresCatalogStore } from '../store/postgres/postgres-catalog-store.ts';
import { createPgPool, unavailableOnOutage } from '../store/postgres/pg-pool.ts';
import { LATEST_SCHEMA_VERSION } from '../store/sqlite/migrations.ts';
import { SqliteCatalogStore } from '../store/sqlite/sqlite-catalog-store.ts';
import { SqliteDatabase } from '../store/sqlite/sqlite-database.ts';
import { commandSpec, parseCommand } from './command-line.ts';
import { databaseUrlOf } from '../settings.ts';

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommand(commandSpec('migrate'), args);
  if ('exit' in parsed) return parsed.exit;
  const url = validateStorageUrl('db', databaseUrlOf(parsed.values), ['sqlite', 'postgres', 'postgresql']);
  const logger = createLogger({ base: { command: 'migrate' } });
  if (url.startsWith('sqlite:')) {
    // SqliteDatabase applies its migrations (and the file settings they rely on) when it opens.
    const catalog = new SqliteCatalogStore(new SqliteDatabase(sqlitePath(url)));
    try {
      // A bulk load that died leaves the GTIN index deferred; rebuilding it is this command's job too.
      const rebuild = !catalog.indexesLive();
      if (rebuild) await catalog.optimize();
      process.stdout.write(`sqlite schema is at version ${LATEST_SCHEMA_VERSION}${rebuild ? '; rebuilt the deferred GTIN index' : ''}\n`);
    } finally {
      await catalog.close();
    }
    return 0;
  }
  const pool = createPgPool(url, logger);
  try {
    const applied = await unavailableOnOutage('catalog database', () => migratePostgres(pool, logger));
    const latest = Math.max(...POSTGRES_MIGRATIONS.map((migration) => migration.version));
    // A bulk load that died leaves variant search indexes dropped; creating them is this command's job too.
    const { rows } = await pool.query<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE tablename = ANY($1::text[])', [
      [...new Set(VARIANT_SEARCH_INDEXES.map((index) => index.table))],
    ]);
    const present = new Set(rows.map((row) => row.indexname));
    const missing = VARIANT_SEARCH_INDEXES.filter((index) => !present.has(index.name));
    if (missing.length > 0) {
      await new PostgresCatalogStore(pool).optimize();
      process.stdout.write(`created the deferred variant indexes ${missing.map((index) => index.name).join(', ')}\n`);
    }
    process.stdout.write(
      applied.length === 0 ? `postgres schema is up to date (version ${latest})\n` : `applied postgres migrations ${applied.join(', ')}; schema is at version ${latest}\n`,
    );
    return 0;
  } finally {
    await pool.end();
  }
}
