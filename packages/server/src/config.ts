// Command-line flags and environment variables become one typed, validated Config. Flags win over
// the environment; anything invalid stops start-up with a message naming the flag.
import { parseArgs } from 'node:util';
import { createRateLimiter, type RateLimiter } from './http/rate-limit.ts';
import type { Logger, LogLevel } from './logger.ts';

export interface Config {
  /** `sqlite:<path>` (embedded, the default) or `postgres://…`. */
  databaseUrl: string;
  /** `sqlite:<path>` or `redis://…`; defaults to the catalog database when it is SQLite. */
  priceLogUrl: string;
  host: string;
  port: number;
  ssePort: number;
  /** Price events per second from the built-in simulator; 0 disables it. */
  simulatePrices: number;
  /** Requests (and stream connection attempts) per key per minute, by plan; 0 disables. */
  rateLimitPerMinute: { free: number; pro: number };
  /** Failed authentications per client address per minute before 429s; 0 disables. */
  authFailuresPerMinute: number;
  /** Where rate-limit counts live: `redis://…` (shared by every instance) or `memory` (per process). */
  rateLimitStore: string;
  /** Open streams one key may hold on one instance. */
  maxStreamsPerKey: number;
  /** An API request unanswered after this long gets 503. */
  requestTimeoutMs: number;
  /** Comment heartbeat interval on streams. */
  heartbeatMs: number;
  /** Bytes buffered for one subscriber before it is disconnected. */
  maxSubscriberBufferBytes: number;
  /** Grace period for in-flight requests on SIGTERM. */
  shutdownGraceMs: number;
  /** Open sockets the API listener accepts; more are closed on accept. */
  maxConnections: number;
  /** Open sockets the stream listener accepts; more are closed on accept. */
  maxStreamConnections: number;
  /** A socket that has not sent complete request headers within this time gets a 408 and is closed. */
  headersTimeoutMs: number;
  logLevel: LogLevel;
}

export const DEFAULT_DATABASE_URL = 'sqlite:./data/catalog.db';
export const DEFAULT_RATE_LIMITS = { free: 600, pro: 6000, authFailures: 300 } as const;

/** The rate limiter a process of this configuration uses (each thread makes its own). */
export function rateLimiterFor(config: Config, logger: Logger): RateLimiter {
  return createRateLimiter(
    { perMinute: config.rateLimitPerMinute, authFailuresPerMinute: config.authFailuresPerMinute },
    { ...(config.rateLimitStore === 'memory' ? {} : { redisUrl: config.rateLimitStore }), logger },
  );
}

export class ConfigError extends Error {}

const OPTIONS = {
  db: { type: 'string' },
  'price-log': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'sse-port': { type: 'string' },
  'simulate-prices': { type: 'string' },
  'rate-limit': { type: 'string' },
  'rate-limit-free': { type: 'string' },
  'rate-limit-pro': { type: 'string' },
  'auth-failure-limit': { type: 'string' },
  'rate-limit-store': { type: 'string' },
  'max-streams-per-key': { type: 'string' },
  'request-timeout-ms': { type: 'string' },
  'heartbeat-ms': { type: 'string' },
  'max-connections': { type: 'string' },
  'max-stream-connections': { type: 'string' },
  'headers-timeout-ms': { type: 'string' },
  'log-level': { type: 'string' },
} as const;

function integer(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`--${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function number(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new ConfigError(`--${name} must be a number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

export function validateStorageUrl(name: string, url: string, schemes: readonly string[]): string {
  const scheme = url.slice(0, url.indexOf(':'));
  if (!schemes.includes(scheme)) {
    throw new ConfigError(`--${name} must start with ${schemes.map((s) => `${s}:`).join(' or ')}, got "${url}"`);
  }
  return url;
}

/** Reads the serve flags; `args` excludes the command name. */
export function loadConfig(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Config {
  const { values } = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: false, strict: true });
  const databaseUrl = validateStorageUrl('db', values.db ?? env['DATABASE_URL'] ?? DEFAULT_DATABASE_URL, ['sqlite', 'postgres', 'postgresql']);
  const priceLogFallback = databaseUrl.startsWith('sqlite:') ? databaseUrl : undefined;
  const priceLogRaw = values['price-log'] ?? env['PRICE_LOG_URL'] ?? priceLogFallback;
  if (priceLogRaw === undefined) {
    throw new ConfigError('--price-log (or PRICE_LOG_URL) is required when the catalog is not SQLite');
  }
  const logLevel = values['log-level'] ?? env['LOG_LEVEL'] ?? 'info';
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) {
    throw new ConfigError(`--log-level must be debug, info, warn or error, got "${logLevel}"`);
  }
  const priceLogUrl = validateStorageUrl('price-log', priceLogRaw, ['sqlite', 'redis', 'rediss']);
  // `--rate-limit` sets every plan's quota; the per-plan flags win over it.
  const everyPlan = values['rate-limit'] ?? env['RATE_LIMIT'];
  const rateLimitFree = integer('rate-limit-free', values['rate-limit-free'] ?? env['RATE_LIMIT_FREE'] ?? everyPlan, DEFAULT_RATE_LIMITS.free, 0, 10_000_000);
  const rateLimitPro = integer('rate-limit-pro', values['rate-limit-pro'] ?? env['RATE_LIMIT_PRO'] ?? everyPlan, DEFAULT_RATE_LIMITS.pro, 0, 10_000_000);
  // Counts are shared through the deployment's Redis when the price log is one.
  const rateLimitStore = values['rate-limit-store'] ?? env['RATE_LIMIT_STORE'] ?? (priceLogUrl.startsWith('sqlite:') ? 'memory' : priceLogUrl);
  if (rateLimitStore !== 'memory' && !/^rediss?:/.test(rateLimitStore)) {
    throw new ConfigError(`--rate-limit-store must be memory or a redis:// URL, got "${rateLimitStore}"`);
  }
  return {
    databaseUrl,
    priceLogUrl,
    host: values.host ?? env['HOST'] ?? '127.0.0.1',
    port: integer('port', values.port ?? env['PORT'], 8080, 0, 65535),
    ssePort: integer('sse-port', values['sse-port'] ?? env['SSE_PORT'], 8081, 0, 65535),
    simulatePrices: number('simulate-prices', values['simulate-prices'] ?? env['SIMULATE_PRICES'], 0, 0, 100000),
    rateLimitPerMinute: { free: rateLimitFree, pro: rateLimitPro },
    authFailuresPerMinute: integer('auth-failure-limit', values['auth-failure-limit'] ?? env['AUTH_FAILURE_LIMIT'], DEFAULT_RATE_LIMITS.authFailures, 0, 10_000_000),
    rateLimitStore,
    maxStreamsPerKey: integer('max-streams-per-key', values['max-streams-per-key'] ?? env['MAX_STREAMS_PER_KEY'], 100, 1, 1_000_000),
    requestTimeoutMs: integer('request-timeout-ms', values['request-timeout-ms'] ?? env['REQUEST_TIMEOUT_MS'], 10_000, 100, 600_000),
    heartbeatMs: integer('heartbeat-ms', values['heartbeat-ms'] ?? env['HEARTBEAT_MS'], 15000, 10, 3_600_000),
    maxSubscriberBufferBytes: 1024 * 1024,
    shutdownGraceMs: 10000,
    maxConnections: integer('max-connections', values['max-connections'] ?? env['MAX_CONNECTIONS'], 4096, 1, 1_000_000),
    maxStreamConnections: integer('max-stream-connections', values['max-stream-connections'] ?? env['MAX_STREAM_CONNECTIONS'], 16384, 1, 1_000_000),
    headersTimeoutMs: integer('headers-timeout-ms', values['headers-timeout-ms'] ?? env['HEADERS_TIMEOUT_MS'], 15000, 1000, 120_000),
    logLevel: logLevel as LogLevel,
  };
}
