// The pg Pool every PostgreSQL adapter shares, and the one place that turns "the database cannot
// answer" into ServiceUnavailable.
//
// Limits: at most PG_POOL_MAX (default 10) connections; a connection attempt gives up after 3 s, a
// statement after 10 s on the server (statement_timeout) and 15 s on the client; idle connections
// close after 30 s. int8 values (cursors, counts) come back as JS numbers; a value that is not
// exact as a double is refused rather than silently rounded.
//
// Waits are bounded per query, so a lock on one table (`LOCK TABLE`, a long migration) cannot take
// the pool from queries that do not need that table:
// - a query (`pool.query`) waits at most `lockTimeoutMs` (DEFAULT_LOCK_TIMEOUT_MS) for a lock
//   (lock_timeout); transactions (`inTransaction`: imports, key writes) keep the statement timeout;
// - the queries on one table (the first after FROM, UPDATE or INTO) hold at most half the pool's
//   connections; more wait for one of them to finish, in order, without holding a connection,
//   and are refused when none finishes within `lockTimeoutMs` (the table is stuck: locked, or
//   its queries slow). A burst of quick look-ups on one table is thus served in turn, not refused;
// - waits are bounded by time (the lock timeout above, 3 s for a connection: `pool_wait`), not
//   by how many wait: a count near the pool's size refused most of an ordinary burst (50
//   connections searching variants) on a healthy database. The count left (`max × 100` waiting
//   in all) only keeps memory bounded when arrivals outrun every timeout;
// - each of these answers ServiceUnavailable naming what timed out (the table, the lock, the
//   pool), counts in `catalog_db_waits_refused_total{cause}` and is logged, at most once per
//   second per cause and table.
import pg from 'pg';
import { Counter } from 'prom-client';
import { ServiceUnavailable } from '../../catalog/errors.ts';
import type { Logger } from '../../logger.ts';
import { registry } from '../../metrics.ts';

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

export const DEFAULT_LOCK_TIMEOUT_MS = 1_000;
const STATEMENT_TIMEOUT_MS = 10_000;
/** How long a query waits for a pool connection (a free one, or a new one connecting) before failing. */
const CONNECTION_TIMEOUT_MS = 3_000;

export interface PgPoolOptions {
  /** Connections; PG_POOL_MAX or 10 when absent. */
  max?: number;
  /** How long a query waits for a lock; DEFAULT_LOCK_TIMEOUT_MS when absent. */
  lockTimeoutMs?: number;
}

/** A query's wait that was cut: what timed out, for the answer, the metric and the log. */
export class DatabaseWaitRefused extends ServiceUnavailable {
  readonly reason: 'lock_timeout' | 'statement_timeout' | 'table_share' | 'pool_queue' | 'pool_wait';
  readonly table: string | undefined;
  constructor(cause: DatabaseWaitRefused['reason'], table: string | undefined, detail: string, options?: ErrorOptions) {
    super('catalog database', options);
    this.reason = cause;
    this.table = table;
    this.message = `The catalog database did not answer in time: ${detail}; retry shortly.`;
  }
}

const waitsRefused = new Counter({
  name: 'catalog_db_waits_refused_total',
  help: 'PostgreSQL queries refused or cut while waiting: lock_timeout, statement_timeout, table_share (half the pool busy on one table for longer than the lock timeout), pool_queue (too many waiting), pool_wait (no connection in time).',
  labelNames: ['cause'] as const,
  registers: [registry],
});

export function createPgPool(url: string, logger: Logger, options: PgPoolOptions = {}): pg.Pool {
  const max = options.max ?? Number(process.env['PG_POOL_MAX'] ?? 10);
  const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString: url.replace(/^postgresql:/, 'postgres:'),
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    lock_timeout: lockTimeoutMs,
    query_timeout: 15_000,
    keepAlive: true,
    application_name: 'catalog',
    types: typeParsers,
  });
  // An idle client losing its connection emits here; without a listener the process would crash.
  pool.on('error', (error) => logger.warn('PostgreSQL connection lost', { error: error.message }));
  boundWaits(pool, max, lockTimeoutMs, logger);
  return pool;
}

/** The table a statement is about: the first after FROM, UPDATE or INTO. */
function tableOf(query: unknown): string | undefined {
  const text = typeof query === 'string' ? query : (query as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? /\b(?:FROM|UPDATE|INTO)\s+([a-z_][a-z0-9_]*)/iu.exec(text)?.[1] : undefined;
}

/** One table's queries: how many hold (or wait for) a pool connection, and those waiting for one of them to finish. */
interface TableShare {
  inFlight: number;
  waiting: (() => void)[];
}

/** Wraps `pool.query` with the per-table share, the queue limit, and the naming of timeouts. */
function boundWaits(pool: pg.Pool, max: number, lockTimeoutMs: number, logger: Logger): void {
  const share = Math.max(1, Math.ceil(max / 2));
  const queueLimit = max * 100;
  const tables = new Map<string, TableShare>();
  /** Queries waiting for their table's share, all tables together. */
  let waitingForShare = 0;
  const loggedAt = new Map<string, number>();
  const refuse = (error: DatabaseWaitRefused): DatabaseWaitRefused => {
    waitsRefused.labels(error.reason).inc();
    const key = `${error.reason}:${error.table ?? ''}`;
    const now = performance.now();
    if ((loggedAt.get(key) ?? Number.NEGATIVE_INFINITY) + 1_000 <= now) {
      loggedAt.set(key, now);
      logger.warn('database wait refused', { cause: error.reason, table: error.table, error: error.message });
    }
    return error;
  };
  /** Resolves once `table` has room for one more query, counted as in flight; throws table_share after lockTimeoutMs. */
  const enter = async (table: string): Promise<void> => {
    let state = tables.get(table);
    if (state === undefined) tables.set(table, (state = { inFlight: 0, waiting: [] }));
    if (state.inFlight < share) {
      state.inFlight += 1;
      return;
    }
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const entered = (): void => {
      clearTimeout(timer);
      waitingForShare -= 1;
      resolve();
    };
    const timer = setTimeout(() => {
      const waiting = state.waiting;
      waiting.splice(waiting.indexOf(entered), 1);
      waitingForShare -= 1;
      reject(refuse(new DatabaseWaitRefused('table_share', table, `no query on ${table} finished within ${lockTimeoutMs} ms to make room (${share} of the pool's ${max} connections are its share)`)));
    }, lockTimeoutMs);
    state.waiting.push(entered);
    waitingForShare += 1;
    return promise;
  };
  /** Hands a finished query's room to the next waiting one, or frees it. */
  const leave = (table: string): void => {
    const state = tables.get(table) as TableShare;
    const next = state.waiting.shift();
    if (next !== undefined) next();
    else if (--state.inFlight === 0) tables.delete(table);
  };
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  const bounded = async (...args: unknown[]): Promise<unknown> => {
    const table = tableOf(args[0]);
    if (pool.waitingCount + waitingForShare >= queueLimit) {
      throw refuse(new DatabaseWaitRefused('pool_queue', table, `${pool.waitingCount + waitingForShare} queries are waiting for one of the pool's ${max} connections`));
    }
    if (table !== undefined) await enter(table);
    try {
      return await query(...args);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const on = table === undefined ? '' : ` on ${table}`;
      if (code === '55P03') throw refuse(new DatabaseWaitRefused('lock_timeout', table, `a query${on} waited ${lockTimeoutMs} ms for a lock (lock_timeout)`, { cause: error }));
      if (code === '57014') throw refuse(new DatabaseWaitRefused('statement_timeout', table, `a query${on} ran ${STATEMENT_TIMEOUT_MS} ms (statement_timeout)`, { cause: error }));
      if (error instanceof Error && /timeout exceeded when trying to connect/iu.test(error.message)) {
        throw refuse(new DatabaseWaitRefused('pool_wait', table, `no pool connection was free within ${CONNECTION_TIMEOUT_MS} ms for a query${on}`, { cause: error }));
      }
      throw error;
    } finally {
      if (table !== undefined) leave(table);
    }
  };
  pool.query = bounded as typeof pool.query;
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
    if (error instanceof ServiceUnavailable) throw error;
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
    // Writes wait for locks as long as a statement may run, not the short wait of queries.
    await client.query(`SET LOCAL lock_timeout = ${STATEMENT_TIMEOUT_MS}`);
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
