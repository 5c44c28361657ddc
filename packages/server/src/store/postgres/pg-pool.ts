// The pg Pool every PostgreSQL adapter shares, and the one place that turns "the database cannot
// answer" into ServiceUnavailable.
//
// Limits: at most PG_POOL_MAX (default 10) connections; a connection attempt gives up after 3 s, a
// statement after 10 s on the server (statement_timeout) and 15 s on the client; idle connections
// close after 30 s. int8 values (cursors, counts) come back as JS numbers; a value that is not
// exact as a double is refused rather than silently rounded.
import pg from 'pg';
import { ServiceUnavailable } from '../../catalog/errors.ts';
import type { Logger } from '../../logger.ts';

const INT8_OID = 20;

export function parseExactInt8(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || BigInt(value) !== BigInt(text)) {
    throw new RangeError(`int8 value ${text} is not exactly representable as a JavaScript number`);
  }
  return value;
}

const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (oid === INT8_OID && format !== 'binary') return parseExactInt8;
    return pg.types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown;
  },
};

export function createPgPool(url: string, logger: Logger): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url.replace(/^postgresql:/, 'postgres:'),
    max: Number(process.env['PG_POOL_MAX'] ?? 10),
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 3_000,
    statement_timeout: 10_000,
    query_timeout: 15_000,
    keepAlive: true,
    application_name: 'catalog',
    types: typeParsers,
  });
  // An idle client losing its connection emits here; without a listener the process would crash.
  pool.on('error', (error) => logger.warn('PostgreSQL connection lost', { error: error.message }));
  return pool;
}

const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN']);
// Connection exceptions, operator intervention (shutdown, cancel by statement_timeout), too many
// connections, and the server starting up or in recovery.
const UNAVAILABLE_SQLSTATE = /^(08|57P0|57014|53300|53400)/;

export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_NODE_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Cannot use a pool after calling end|connection timeout|not queryable/i.test(
    error.message,
  );
}

/** Runs `work`, rethrowing engine outages as ServiceUnavailable and every other error unchanged. */
export async function unavailableOnOutage<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUnavailable(error)) throw new ServiceUnavailable(what, { cause: error });
    throw error;
  }
}

/** One transaction on one pooled client; rolled back when `work` throws. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    broken = isUnavailable(error);
    if (!broken) await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release(broken);
  }
}
