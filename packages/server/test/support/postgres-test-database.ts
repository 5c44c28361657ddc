// A throw-away PostgreSQL database per test run (`catalog_test_<random>` on 127.0.0.1:5432), so
// runs in parallel never see each other's rows. Dropped, with any open connection, by drop().
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const POSTGRES_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  name: string;
  /** URL of the database, optionally through another host:port (a proxy). */
  url(port?: number): string;
  drop(): Promise<void>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `catalog_test_${randomBytes(6).toString('hex')}`;
  // The name is generated above from hex digits only; identifiers cannot be bound as parameters.
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  return {
    name,
    url: (port = 5432) => `postgres://postgres@127.0.0.1:${port}/${name}`,
    drop: () => admin(async (client) => void (await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}
