// The serve settings, as given by flags or environment variables (parsed by cli/command-line.ts,
// which calls configFrom), become one typed, validated Config. Anything invalid stops start-up
// with a message naming the flag. Every default, bound and choice is the settings table's
// (settings.ts).
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { LogLevel } from './logger.ts';
import { parseRetrySchedule } from './monitors/retry-schedule.ts';
import {
  databaseUrlOf,
  defaultOf,
  numericValue,
  priceLogUrlOf,
  SERVE_SETTINGS,
  SettingError,
  type IntegerSetting,
  type NumberSetting,
  type ServeFlag,
  type Setting,
  type SettingValues,
} from './settings.ts';

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
  /** Threads reading storefront documents from a SQLite catalog (store/sqlite/document-readers.ts). */
  documentReaders: number;
  /** The absolute path of the operator's middleware module (http/operator-middleware.ts); none when undefined. */
  middleware?: string;
  /** OpenTelemetry tracing (tracing.ts): on or off as asked; undefined lets the OTEL_* variables decide. */
  tracing?: boolean;
  /** Open sockets the API listener accepts; more are closed on accept. */
  maxConnections: number;
  /** Open sockets the stream listener accepts; more are closed on accept. */
  maxStreamConnections: number;
  /** A socket that has not sent complete request headers within this time gets a 408 and is closed. */
  headersTimeoutMs: number;
  logLevel: LogLevel;
  /** How price monitors deliver (monitors/monitor-sender.ts). */
  monitors: MonitorDeliveryConfig;
}

interface MonitorDeliveryConfig {
  /** Delays after each failed attempt, in ms; the monitor is disabled after the last. */
  retryScheduleMs: number[];
  timeoutMs: number;
  /** Deliveries sent at once to one endpoint by this instance. */
  endpointConcurrency: number;
  /** Deliver to loopback, private and link-local addresses (development and tests only). */
  allowPrivateEndpoints: boolean;
}

export class ConfigError extends Error {
  /** The exit status a command should end with: 2 for usage, 0 after --help. */
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

type NumericFlag = { [F in ServeFlag]: (typeof SERVE_SETTINGS)[F] extends IntegerSetting | NumberSetting ? F : never }[ServeFlag];

/** A numeric setting from `raw` (flag or environment), else its default; refused outside its bounds. */
function numeric(flag: NumericFlag, raw: string | undefined): number;
function numeric(flag: NumericFlag, raw: string | undefined, optional: 'optional'): number | undefined;
function numeric(flag: NumericFlag, raw: string | undefined, _optional?: 'optional'): number | undefined {
  const setting: IntegerSetting | NumberSetting = SERVE_SETTINGS[flag];
  if ((raw === undefined || raw === '') && setting.default === null && _optional === undefined) throw new Error(`--${flag} has no default value`);
  try {
    return numericValue(flag, setting, raw);
  } catch (error) {
    throw error instanceof SettingError ? new ConfigError(error.message) : error;
  }
}

/** A text setting from `raw`, else its default; refused when it has choices and is not one. */
function text(flag: ServeFlag, raw: string | undefined): string | undefined {
  const setting: Setting = SERVE_SETTINGS[flag];
  if (setting.kind !== 'text') throw new Error(`--${flag} is not a text setting`);
  const value = raw ?? setting.default ?? undefined;
  if (value !== undefined && setting.choices !== undefined && !setting.choices.includes(value)) {
    const choices = setting.choices;
    throw new ConfigError(`--${flag} must be ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}, got "${value}"`);
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

/** Validates parsed serve values (flag, else environment variable) into a Config. */
export function configFrom(values: SettingValues): Config {
  const given = (flag: ServeFlag): string | undefined => values[flag] as string | undefined;
  const integer = (flag: NumericFlag): number => numeric(flag, given(flag));
  const databaseUrl = validateStorageUrl('db', databaseUrlOf(values), ['sqlite', 'postgres', 'postgresql']);
  const priceLogRaw = priceLogUrlOf(values);
  if (priceLogRaw === undefined) {
    throw new ConfigError('--price-log (or PRICE_LOG_URL) is required when the catalog is not SQLite');
  }
  const logLevel = text('log-level', given('log-level')) as LogLevel;
  const priceLogUrl = validateStorageUrl('price-log', priceLogRaw, ['sqlite', 'redis', 'rediss']);
  // `--rate-limit` sets every plan's quota; the per-plan flags win over it.
  const everyPlan = given('rate-limit');
  numeric('rate-limit', everyPlan, 'optional');
  const rateLimitFree = numeric('rate-limit-free', given('rate-limit-free') ?? everyPlan);
  const rateLimitPro = numeric('rate-limit-pro', given('rate-limit-pro') ?? everyPlan);
  // Counts are shared through the deployment's Redis when the price log is one.
  const rateLimitStore = text('rate-limit-store', given('rate-limit-store')) ?? (priceLogUrl.startsWith('sqlite:') ? 'memory' : priceLogUrl);
  if (rateLimitStore !== 'memory' && !/^rediss?:/.test(rateLimitStore)) {
    throw new ConfigError(`--rate-limit-store must be memory or a redis:// URL, got "${rateLimitStore}"`);
  }
  const metricsPort = numeric('metrics-port', given('metrics-port'), 'optional');
  const indexSnapshotDir = text('index-snapshot-dir', given('index-snapshot-dir'));
  const middleware = text('middleware', given('middleware'));
  const tracing = text('tracing', given('tracing'));
  let retryScheduleMs: number[];
  try {
    retryScheduleMs = parseRetrySchedule(text('monitor-retry-schedule', given('monitor-retry-schedule')) ?? defaultOf('monitor-retry-schedule'));
  } catch (error) {
    throw new ConfigError(`--monitor-retry-schedule: ${(error as Error).message}`);
  }
  return {
    databaseUrl,
    priceLogUrl,
    host: text('host', given('host')) ?? defaultOf('host'),
    port: integer('port'),
    ssePort: integer('sse-port'),
    simulatePrices: integer('simulate-prices'),
    rateLimitPerMinute: { free: rateLimitFree, pro: rateLimitPro },
    authFailuresPerMinute: integer('auth-failure-limit'),
    rateLimitStore,
    maxStreamsPerKey: integer('max-streams-per-key'),
    requestTimeoutMs: integer('request-timeout-ms'),
    heartbeatMs: integer('heartbeat-ms'),
    maxSubscriberBufferBytes: integer('max-subscriber-buffer-bytes'),
    shutdownGraceMs: integer('shutdown-grace-ms'),
    shutdownDelayMs: integer('shutdown-delay-ms'),
    ...(metricsPort === undefined ? {} : { metricsPort }),
    ...(indexSnapshotDir === undefined ? {} : { indexSnapshotDir }),
    documentReaders: numeric('document-readers', given('document-readers'), 'optional') ?? Math.min(4, Math.max(1, availableParallelism() - 1)),
    ...(middleware === undefined ? {} : { middleware: resolve(middleware) }),
    ...(tracing === undefined ? {} : { tracing: tracing === 'on' }),
    maxConnections: integer('max-connections'),
    maxStreamConnections: integer('max-stream-connections'),
    headersTimeoutMs: integer('headers-timeout-ms'),
    logLevel,
    monitors: {
      retryScheduleMs,
      timeoutMs: integer('monitor-timeout-ms'),
      endpointConcurrency: integer('monitor-endpoint-concurrency'),
      allowPrivateEndpoints: text('monitor-private-endpoints', given('monitor-private-endpoints')) === 'allow',
    },
  };
}
