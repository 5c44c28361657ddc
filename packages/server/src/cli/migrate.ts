// `catalog migrate --db <url>`: applies pending schema migrations and reports what it applied.
// Serving also migrates on start-up; this command lets operators migrate ahead of a roll-out.
import { parseArgs } from 'node:util';
import { DEFAULT_DATABASE_URL, validateStorageUrl } from '../config.ts';
import { createLogger } from '../logger.ts';
import { migratePostgres } from '../store/postgres/migrate-postgres.ts';
import { createPgPool, unavailableOnOutage } from '../store/postgres/pg-pool.ts';

export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { db: { type: 'string' } }, allowPositionals: false, strict: true });
  const url = validateStorageUrl('db', values.db ?? process.env['DATABASE_URL'] ?? DEFAULT_DATABASE_URL, ['sqlite', 'postgres', 'postgresql']);
  const logger = createLogger({ base: { command: 'migrate' } });
  if (url.startsWith('sqlite:')) {
    throw new Error('SQLite migrations are applied when the database is opened; this build migrates postgres:// only');
  }
  const pool = createPgPool(url, logger);
  try {
    const applied = await unavailableOnOutage('catalog database', () => migratePostgres(pool, logger));
    process.stdout.write(applied.length === 0 ? 'schema is up to date\n' : `applied migrations ${applied.join(', ')}\n`);
    return 0;
  } finally {
    await pool.end();
  }
}
