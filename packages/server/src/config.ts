// Command-line flags and environment variables become one typed, validated Config. Flags win over
// the environment; anything invalid stops start-up with a message naming the flag.
import { commandSpec, databaseUrlOf, DEFAULT_DATABASE_URL, parseCommand, priceLogUrlOf, type ParsedValues } from './cli/command-line.ts';
import type { LogLevel } from './logger.ts';

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
  /** On SIGTERM, how long /readyz answers 503 before the listeners close. */
  shutdownDelayMs: number;
  /** The port of the /metrics listener; none when undefined. */
  metricsPort?: number;
  /** Set by the service for its stream thread: log readable lines, as the main thread does on a terminal. */
  terminalLogs?: boolean;
  /** Where storefront index snapshots live; undefined: the engine's default place; 'none': off. */
  indexSnapshotDir?: string;
  /** Open sockets the API listener accepts; more are closed on accept. */
  maxConnections: number;
  /** Open sockets the stream listener accepts; more are closed on accept. */
  maxStreamConnections: number;
  /** A socket that has not sent complete request headers within this time gets a 408 and is closed. */
  headersTimeoutMs: number;
  logLevel: LogLevel;
}

export { DEFAULT_DATABASE_URL };
export const DEFAULT_RATE_LIMITS = { free: 600, pro: 6000, authFailures: 300 } as const;


export class ConfigError extends Error {
  /** The exit status a command should end with: 2 for usage, 0 after --help. */
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

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

/**
 * Reads the serve flags (the `serve` table in cli/command-line.ts); `args` excludes the command
 * name. Throws ConfigError for a bad value, and for `--help` or a usage error, which parseCommand
 * has already answered on stdout or stderr (`exitCode` says how to exit).
 */
export function loadConfig(args: readonly string[], env: NodeJS.ProcessEnv = process.env, command: 'serve' | 'start' = 'serve'): Config {
  const parsed = parseCommand(commandSpec(command), args, env);
  if ('exit' in parsed) throw new ConfigError(parsed.exit === 0 ? '' : 'invalid arguments', parsed.exit);
  return configFrom(parsed.values);
}

/** Validates parsed serve values (flag, else environment variable) into a Config. */
export function configFrom(values: ParsedValues): Config {
  const text = (flag: string): string | undefined => values[flag] as string | undefined;
  const databaseUrl = validateStorageUrl('db', databaseUrlOf(values), ['sqlite', 'postgres', 'postgresql']);
  const priceLogRaw = priceLogUrlOf(values);
  if (priceLogRaw === undefined) {
    throw new ConfigError('--price-log (or PRICE_LOG_URL) is required when the catalog is not SQLite');
  }
  const logLevel = text('log-level') ?? 'info';
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) {
    throw new ConfigError(`--log-level must be debug, info, warn or error, got "${logLevel}"`);
  }
  const priceLogUrl = validateStorageUrl('price-log', priceLogRaw, ['sqlite', 'redis', 'rediss']);
  // `--rate-limit` sets every plan's quota; the per-plan flags win over it.
  const everyPlan = text('rate-limit');
  const rateLimitFree = integer('rate-limit-free', text('rate-limit-free') ?? everyPlan, DEFAULT_RATE_LIMITS.free, 0, 10_000_000);
  const rateLimitPro = integer('rate-limit-pro', text('rate-limit-pro') ?? everyPlan, DEFAULT_RATE_LIMITS.pro, 0, 10_000_000);
  // Counts are shared through the deployment's Redis when the price log is one.
  const rateLimitStore = text('rate-limit-store') ?? (priceLogUrl.startsWith('sqlite:') ? 'memory' : priceLogUrl);
  if (rateLimitStore !== 'memory' && !/^rediss?:/.test(rateLimitStore)) {
    throw new ConfigError(`--rate-limit-store must be memory or a redis:// URL, got "${rateLimitStore}"`);
  }
  return {
    databaseUrl,
    priceLogUrl,
    host: text('host') ?? '127.0.0.1',
    port: integer('port', text('port'), 8080, 0, 65535),
    ssePort: integer('sse-port', text('sse-port'), 8081, 0, 65535),
    simulatePrices: number('simulate-prices', text('simulate-prices'), 0, 0, 100000),
    rateLimitPerMinute: { free: rateLimitFree, pro: rateLimitPro },
    authFailuresPerMinute: integer('auth-failure-limit', text('auth-failure-limit'), DEFAULT_RATE_LIMITS.authFailures, 0, 10_000_000),
    rateLimitStore,
    maxStreamsPerKey: integer('max-streams-per-key', text('max-streams-per-key'), 100, 1, 1_000_000),
    requestTimeoutMs: integer('request-timeout-ms', text('request-timeout-ms'), 10_000, 100, 600_000),
    heartbeatMs: integer('heartbeat-ms', text('heartbeat-ms'), 15000, 10, 3_600_000),
    maxSubscriberBufferBytes: 1024 * 1024,
    shutdownGraceMs: 10000,
    shutdownDelayMs: integer('shutdown-delay-ms', text('shutdown-delay-ms'), 0, 0, 600_000),
    ...(text('metrics-port') === undefined ? {} : { metricsPort: integer('metrics-port', text('metrics-port'), 0, 0, 65535) }),
    ...(text('index-snapshot-dir') === undefined ? {} : { indexSnapshotDir: text('index-snapshot-dir')! }),
    maxConnections: integer('max-connections', text('max-connections'), 4096, 1, 1_000_000),
    maxStreamConnections: integer('max-stream-connections', text('max-stream-connections'), 16384, 1, 1_000_000),
    headersTimeoutMs: integer('headers-timeout-ms', text('headers-timeout-ms'), 15000, 1000, 120_000),
    logLevel: logLevel as LogLevel,
  };
}
