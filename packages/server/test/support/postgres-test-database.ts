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
    drop: () =>
      admin(async (client) => {
        // A pool's end() resolves while its clients' goodbyes are still on the wire; a connection
        // that FORCE terminates then reports it as an error nobody listens to any more. Give
        // closing connections a moment to leave first; FORCE ends whatever a test left open.
        for (let waited = 0; waited < 1_000; waited += 50) {
          const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
          if (rows[0]?.n === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}
