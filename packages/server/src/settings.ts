// Every command's settings, each once: flag, environment variable, typed default, bounds and help.
// One table per command (`serve`/`start` share one) drives parsing and `--help`
// (cli/command-line.ts), the typed Config (config.ts), the commands' own values (cli/seed.ts,
// cli/prices.ts), the README's configuration reference (`pnpm docs:config`) and the defaults the
// listeners fall back on when a caller gives none (stream-server.ts, operation-pipeline.ts). It
// imports only the contract's stream figures, so every layer may read it.
//
// A default is either a value of the setting's type, or, where it depends on other settings,
// null with `defaultRule` saying what it is (applied by the command); null without a rule means
// the setting has no default (it is optional, or required where its help says so).

import { HEARTBEAT_MS } from '@catalog/contract/stream';

interface SettingBase {
  /** The value's placeholder in help, e.g. `<ms>`. */
  value: string;
  /** The environment variable read when the flag is absent; none for one-off commands' flags. */
  env?: string;
  help: string;
  /** The default when it is a rule rather than a value (then `default` is null). */
  defaultRule?: string;
}

export interface IntegerSetting extends SettingBase {
  kind: 'integer';
  default: number | null;
  min: number;
  max: number;
}

export interface NumberSetting extends SettingBase {
  kind: 'number';
  default: number | null;
  min: number;
  max: number;
}

export interface TextSetting extends SettingBase {
  kind: 'text';
  default: string | null;
  choices?: readonly string[];
}

export type Setting = IntegerSetting | NumberSetting | TextSetting;

/** `serve` and `start` settings by flag (without dashes), in the order help lists them. */
export const SERVE_SETTINGS = {
  db: {
    kind: 'text',
    value: '<url>',
    env: 'DATABASE_URL',
    default: 'sqlite:./data/catalog.db',
    help: 'the catalog and key database: sqlite:<path> (embedded) or postgres://user@host:5432/name',
  },
  'price-log': {
    kind: 'text',
    value: '<url>',
    env: 'PRICE_LOG_URL',
    default: null,
    defaultRule: 'the --db database when it is SQLite',
    help: 'the price log: sqlite:<path> or redis://host:6379 (required with PostgreSQL)',
  },
  host: { kind: 'text', value: '<address>', env: 'HOST', default: '127.0.0.1', help: 'the address both listeners bind; 0.0.0.0 to be reachable from a load balancer' },
  port: { kind: 'integer', value: '<n>', env: 'PORT', default: 8080, min: 0, max: 65535, help: 'the HTTP API port (0 picks a free one)' },
  'sse-port': { kind: 'integer', value: '<n>', env: 'SSE_PORT', default: 8081, min: 0, max: 65535, help: 'the price stream port (0 picks a free one)' },
  'simulate-prices': {
    kind: 'number',
    value: '<events/s>',
    env: 'SIMULATE_PRICES',
    default: 0,
    min: 0,
    max: 100_000,
    help: 'price events per second from the built-in simulator; 0 turns it off',
  },
  'rate-limit': {
    kind: 'integer',
    value: '<n>',
    env: 'RATE_LIMIT',
    default: null,
    min: 0,
    max: 10_000_000,
    help: 'requests per key per minute for every plan; 0 turns limits off',
  },
  'rate-limit-free': {
    kind: 'integer',
    value: '<n>',
    env: 'RATE_LIMIT_FREE',
    default: 600,
    min: 0,
    max: 10_000_000,
    help: 'requests (and stream attempts) per free key per minute',
  },
  'rate-limit-pro': {
    kind: 'integer',
    value: '<n>',
    env: 'RATE_LIMIT_PRO',
    default: 6000,
    min: 0,
    max: 10_000_000,
    help: 'requests (and stream attempts) per Pro key per minute',
  },
  'auth-failure-limit': {
    kind: 'integer',
    value: '<n>',
    env: 'AUTH_FAILURE_LIMIT',
    default: 300,
    min: 0,
    max: 10_000_000,
    help: 'failed authentications per client address per minute before 429s',
  },
  'rate-limit-store': {
    kind: 'text',
    value: '<url>',
    env: 'RATE_LIMIT_STORE',
    default: null,
    defaultRule: 'the price log when it is Redis, else memory',
    help: 'where rate-limit counts live: memory (per process) or redis://… (shared by every instance)',
  },
  'max-streams-per-key': {
    kind: 'integer',
    value: '<n>',
    env: 'MAX_STREAMS_PER_KEY',
    default: 100,
    min: 1,
    max: 1_000_000,
    help: 'open streams one key may hold on this instance',
  },
  'max-connections': { kind: 'integer', value: '<n>', env: 'MAX_CONNECTIONS', default: 4096, min: 1, max: 1_000_000, help: 'open sockets on the API listener' },
  'max-stream-connections': {
    kind: 'integer',
    value: '<n>',
    env: 'MAX_STREAM_CONNECTIONS',
    default: 16384,
    min: 1,
    max: 1_000_000,
    help: 'open sockets on the stream listener',
  },
  'headers-timeout-ms': {
    kind: 'integer',
    value: '<ms>',
    env: 'HEADERS_TIMEOUT_MS',
    default: 15000,
    min: 1000,
    max: 120_000,
    help: 'time a socket has to send complete request headers (then 408)',
  },
  'request-timeout-ms': {
    kind: 'integer',
    value: '<ms>',
    env: 'REQUEST_TIMEOUT_MS',
    default: 10000,
    min: 100,
    max: 600_000,
    help: 'time an API request has to be answered (then 503)',
  },
  'metrics-port': {
    kind: 'integer',
    value: '<n>',
    env: 'METRICS_PORT',
    default: null,
    defaultRule: 'none (no metrics listener)',
    min: 0,
    max: 65535,
    help: 'serve Prometheus metrics at /metrics on this port (every thread, one scrape)',
  },
  'shutdown-delay-ms': {
    kind: 'integer',
    value: '<ms>',
    env: 'SHUTDOWN_DELAY_MS',
    default: 0,
    min: 0,
    max: 600_000,
    help: 'on SIGTERM, time /readyz answers 503 while both listeners still serve, so a load balancer stops sending before they close',
  },
  'shutdown-grace-ms': {
    kind: 'integer',
    value: '<ms>',
    env: 'SHUTDOWN_GRACE_MS',
    default: 10000,
    min: 0,
    max: 600_000,
    help: 'on SIGTERM, once the listeners close, time in-flight requests have to finish before their sockets are closed',
  },
  'heartbeat-ms': {
    kind: 'integer',
    value: '<ms>',
    env: 'HEARTBEAT_MS',
    default: HEARTBEAT_MS,
    min: 10,
    max: 3_600_000,
    help: 'interval of the stream heartbeat comment',
  },
  'max-subscriber-buffer-bytes': {
    kind: 'integer',
    value: '<bytes>',
    env: 'MAX_SUBSCRIBER_BUFFER_BYTES',
    default: 1_048_576,
    min: 65_536,
    max: 1_073_741_824,
    help: 'bytes held for one stream subscriber (queued, buffered and unacknowledged) before it is disconnected',
  },
  'document-readers': {
    kind: 'integer',
    value: '<n>',
    env: 'DOCUMENT_READERS',
    default: null,
    defaultRule: 'one less than the cores, at least 1 and at most 4',
    min: 0,
    max: 64,
    help: "threads that read storefront listings' documents from a SQLite catalog, beside the API's thread (0: the API's thread reads them); PostgreSQL ignores it",
  },
  'index-snapshot-dir': {
    kind: 'text',
    value: '<dir>',
    env: 'INDEX_SNAPSHOT_DIR',
    default: null,
    defaultRule: 'beside a SQLite catalog; in the database for PostgreSQL',
    help: 'a directory where the storefront index snapshot (one file per catalog) is read at start and written after it, so a start does not read every storefront row; `none` turns it off',
  },
  middleware: {
    kind: 'text',
    value: '<module>',
    env: 'CATALOG_MIDDLEWARE',
    default: null,
    help: 'an ES module whose default export, called with the listener (`api` or `stream`), returns the Express middleware that runs for every request of that listener, before its operations',
  },
  tracing: {
    kind: 'text',
    value: '<on/off>',
    env: 'CATALOG_TRACING',
    default: null,
    choices: ['on', 'off'],
    defaultRule: 'on when OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_TRACES_EXPORTER (not `none`) is set',
    help: 'OpenTelemetry traces of every request (HTTP, Express, PostgreSQL and Redis spans), exported where the standard OTEL_* variables say (OTLP to localhost:4318 by default); OTEL_SDK_DISABLED=true turns it off',
  },
  'log-level': {
    kind: 'text',
    value: '<level>',
    env: 'LOG_LEVEL',
    default: 'info',
    choices: ['debug', 'info', 'warn', 'error'],
    help: 'the least severe level logged',
  },
  'monitor-retry-schedule': {
    kind: 'text',
    value: '<delays>',
    env: 'MONITOR_RETRY_SCHEDULE',
    default: '5s,5m,30m,2h,5h,10h,10h',
    help: 'when a failed price monitor delivery is tried again, after each failure in turn (ms, s, m, h); after the last, the monitor is disabled',
  },
  'monitor-timeout-ms': {
    kind: 'integer',
    value: '<ms>',
    env: 'MONITOR_TIMEOUT_MS',
    default: 15_000,
    min: 100,
    max: 120_000,
    help: 'time a monitor endpoint has to answer a delivery before the attempt counts as failed',
  },
  'monitor-endpoint-concurrency': {
    kind: 'integer',
    value: '<n>',
    env: 'MONITOR_ENDPOINT_CONCURRENCY',
    default: 4,
    min: 1,
    max: 100,
    help: 'deliveries this instance sends at once to one endpoint (scheme, host and port)',
  },
  'monitor-private-endpoints': {
    kind: 'text',
    value: '<refuse|allow>',
    env: 'MONITOR_PRIVATE_ENDPOINTS',
    default: 'refuse',
    choices: ['refuse', 'allow'],
    help: 'whether monitors may deliver to loopback, private and link-local addresses (allow only for receivers on your own network, or tests)',
  },
} as const satisfies Record<string, Setting>;

export type ServeFlag = keyof typeof SERVE_SETTINGS;

/** The default of a setting whose default is a value, typed as the setting's value. */
export function defaultOf<F extends ServeFlag>(flag: F): Exclude<(typeof SERVE_SETTINGS)[F]['default'], null> {
  const setting: Setting = SERVE_SETTINGS[flag];
  const value = setting.default;
  if (value === null) throw new Error(`--${flag} has no default value (${setting.defaultRule ?? 'none'})`);
  return value as Exclude<(typeof SERVE_SETTINGS)[F]['default'], null>;
}

/** Settings as given, by flag: the flag's value, else its environment variable's; no default applied. */
export type SettingValues = Record<string, string | boolean | undefined>;

const DEFAULT_DATABASE_URL = defaultOf('db');

/** The catalog database: the flag (or DATABASE_URL, already in `values`), else the default. */
export function databaseUrlOf(values: SettingValues): string {
  return (values['db'] as string | undefined) ?? DEFAULT_DATABASE_URL;
}

/** The price log: the flag (or PRICE_LOG_URL), else the catalog database when it is SQLite. */
export function priceLogUrlOf(values: SettingValues): string | undefined {
  const db = databaseUrlOf(values);
  return (values['price-log'] as string | undefined) ?? (db.startsWith('sqlite:') ? db : undefined);
}

/** `seed` options by flag (beside --db). */
export const SEED_SETTINGS = {
  products: { kind: 'integer', value: '<n>', default: 2000, min: 1, max: 100_000_000, help: 'catalog products to generate (and half as many storefront products)' },
  'storefront-products': {
    kind: 'integer',
    value: '<n>',
    default: null,
    min: 1,
    max: 50_000_000,
    help: 'generate only this many storefront products (no catalog products, no catalog variants), for storefront-sized runs',
  },
  seed: { kind: 'text', value: '<text>', default: 'catalog', help: 'the same seed gives the same catalog' },
  out: { kind: 'text', value: '<dir>', default: null, help: 'write catalog.ndjson and storefront.ndjson there instead of the database' },
} as const satisfies Record<string, Setting>;

/** `prices publish` options by flag (beside --db and --price-log). */
export const PRICES_PUBLISH_SETTINGS = {
  'retry-for-ms': {
    kind: 'integer',
    value: '<ms>',
    default: 30_000,
    min: 0,
    max: 86_400_000,
    help: 'how long a batch the price log refuses is tried again (in order) before it is reported NOT stored and skipped',
  },
} as const satisfies Record<string, Setting>;

/** `monitors add` options with a value (beside --db, --key, --url, --filter and --allow-http). */
export const MONITORS_ADD_SETTINGS = {
  'min-change-percent': { kind: 'number', value: '<percent>', default: 5, min: 0, max: 1000, help: 'the least change from the last delivered price that is delivered; 0 delivers every change' },
  'min-interval': { kind: 'integer', value: '<seconds>', default: 0, min: 0, max: 86_400, help: 'the least time between two deliveries; changes meanwhile are sent together' },
} as const satisfies Record<string, Setting>;

/** `prices simulate` options by flag (beside --db and --price-log). */
export const PRICES_SIMULATE_SETTINGS = {
  rate: { kind: 'number', value: '<events/s>', default: null, min: 0.001, max: 100_000, help: 'events per second (required)' },
  variants: { kind: 'integer', value: '<n>', default: 500, min: 1, max: 1_000_000, help: 'variants to simulate, sampled from the catalog when it has some' },
} as const satisfies Record<string, Setting>;

/** A value a setting's bounds refuse; the message names the flag. */
export class SettingError extends Error {}

/**
 * A numeric setting from `raw` (the flag, else its environment variable), else its default, which
 * is undefined when it has none; throws SettingError outside the setting's bounds.
 */
export function numericValue(flag: string, setting: IntegerSetting | NumberSetting, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return setting.default ?? undefined;
  const value = Number(raw);
  const { min, max } = setting;
  if (setting.kind === 'integer' ? !Number.isInteger(value) || value < min || value > max : !Number.isFinite(value) || value < min || value > max) {
    throw new SettingError(`--${flag} must be ${setting.kind === 'integer' ? 'an integer' : 'a number'} from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}
