// Every command's options as one table each (flag, value, environment variable, default, help),
// which drives parsing (commander), `--help`/`-h` and the README's configuration reference
// (scripts/config-reference.ts; a test fails when the README drifts from these tables).
//
// Precedence everywhere: the flag, then its environment variable, then the default. The storage
// URLs follow one chain for every command: `--db` > DATABASE_URL > sqlite:./data/catalog.db, and
// `--price-log` > PRICE_LOG_URL > the catalog database when it is SQLite.
import { Command, CommanderError, Option } from 'commander';

export interface OptionSpec {
  /** The long flag without dashes, e.g. `price-log`. */
  flag: string;
  /** The value's placeholder, e.g. `<url>`; absent for a switch. */
  value?: string;
  env?: string;
  /** The default as users read it (a value or a rule). */
  default?: string;
  help: string;
  choices?: readonly string[];
}

export interface CommandSpec {
  /** As typed after `catalog`, e.g. `keys create`. */
  name: string;
  summary: string;
  /** Positional arguments, e.g. `<file...>`. */
  arguments?: string;
  options: readonly OptionSpec[];
}

export const DEFAULT_DATABASE_URL = 'sqlite:./data/catalog.db';

const DB: OptionSpec = {
  flag: 'db',
  value: '<url>',
  env: 'DATABASE_URL',
  default: DEFAULT_DATABASE_URL,
  help: 'the catalog and key database: sqlite:<path> (embedded) or postgres://user@host:5432/name',
};
const PRICE_LOG: OptionSpec = {
  flag: 'price-log',
  value: '<url>',
  env: 'PRICE_LOG_URL',
  default: 'the --db database when it is SQLite',
  help: 'the price log: sqlite:<path> or redis://host:6379 (required with PostgreSQL)',
};

const SERVE_OPTIONS: readonly OptionSpec[] = [
  DB,
  PRICE_LOG,
  { flag: 'host', value: '<address>', env: 'HOST', default: '127.0.0.1', help: 'the address both listeners bind; 0.0.0.0 to be reachable from a load balancer' },
  { flag: 'port', value: '<n>', env: 'PORT', default: '8080', help: 'the HTTP API port (0 picks a free one)' },
  { flag: 'sse-port', value: '<n>', env: 'SSE_PORT', default: '8081', help: 'the price stream port (0 picks a free one)' },
  { flag: 'simulate-prices', value: '<events/s>', env: 'SIMULATE_PRICES', default: '0', help: 'price events per second from the built-in simulator; 0 turns it off' },
  { flag: 'rate-limit', value: '<n>', env: 'RATE_LIMIT', help: 'requests per key per minute for every plan; 0 turns limits off' },
  { flag: 'rate-limit-free', value: '<n>', env: 'RATE_LIMIT_FREE', default: '600', help: 'requests (and stream attempts) per free key per minute' },
  { flag: 'rate-limit-pro', value: '<n>', env: 'RATE_LIMIT_PRO', default: '6000', help: 'requests (and stream attempts) per Pro key per minute' },
  { flag: 'auth-failure-limit', value: '<n>', env: 'AUTH_FAILURE_LIMIT', default: '300', help: 'failed authentications per client address per minute before 429s' },
  { flag: 'rate-limit-store', value: '<url>', env: 'RATE_LIMIT_STORE', default: 'the price log when it is Redis, else memory', help: 'where rate-limit counts live: memory (per process) or redis://… (shared by every instance)' },
  { flag: 'max-streams-per-key', value: '<n>', env: 'MAX_STREAMS_PER_KEY', default: '100', help: 'open streams one key may hold on this instance' },
  { flag: 'max-connections', value: '<n>', env: 'MAX_CONNECTIONS', default: '4096', help: 'open sockets on the API listener' },
  { flag: 'max-stream-connections', value: '<n>', env: 'MAX_STREAM_CONNECTIONS', default: '16384', help: 'open sockets on the stream listener' },
  { flag: 'headers-timeout-ms', value: '<ms>', env: 'HEADERS_TIMEOUT_MS', default: '15000', help: 'time a socket has to send complete request headers (then 408)' },
  { flag: 'request-timeout-ms', value: '<ms>', env: 'REQUEST_TIMEOUT_MS', default: '10000', help: 'time an API request has to be answered (then 503)' },
  { flag: 'metrics-port', value: '<n>', env: 'METRICS_PORT', default: 'none (no metrics listener)', help: 'serve Prometheus metrics at /metrics on this port (both threads, one scrape)' },
  { flag: 'shutdown-delay-ms', value: '<ms>', env: 'SHUTDOWN_DELAY_MS', default: '0', help: 'on SIGTERM, time /readyz answers 503 while both listeners still serve, so a load balancer stops sending before they close' },
  { flag: 'heartbeat-ms', value: '<ms>', env: 'HEARTBEAT_MS', default: '15000', help: 'interval of the stream heartbeat comment' },
  { flag: 'index-snapshot-dir', value: '<dir>', env: 'INDEX_SNAPSHOT_DIR', default: 'beside a SQLite catalog; <tmpdir>/catalog-storefront-index for PostgreSQL', help: 'where the storefront index snapshot (one file per catalog) is read at start and written after it, so a restart does not read every storefront row; `none` turns it off' },
  { flag: 'log-level', value: '<level>', env: 'LOG_LEVEL', default: 'info', help: 'the least severe level logged', choices: ['debug', 'info', 'warn', 'error'] },
];

export const COMMANDS: readonly CommandSpec[] = [
  { name: 'serve', summary: 'run the HTTP API and the price stream until SIGTERM', options: SERVE_OPTIONS },
  { name: 'start', summary: 'seed a demo catalog when none exists, create demo keys, serve with simulated prices', options: SERVE_OPTIONS },
  {
    name: 'seed',
    summary: 'write a deterministic synthetic catalog into the database, or as NDJSON files',
    options: [
      DB,
      { flag: 'products', value: '<n>', default: '2000', help: 'catalog products to generate (and half as many storefront products)' },
      { flag: 'storefront-products', value: '<n>', help: 'generate only this many storefront products (no catalog products, no catalog variants), for storefront-sized runs' },
      { flag: 'seed', value: '<text>', default: 'catalog', help: 'the same seed gives the same catalog' },
      { flag: 'out', value: '<dir>', help: 'write catalog.ndjson and storefront.ndjson there instead of the database' },
    ],
  },
  {
    name: 'import',
    summary: 'upsert NDJSON catalog or storefront products by id; bad lines are reported as FILE:LINE',
    arguments: '<file...>',
    options: [DB, { flag: 'kind', value: '<kind>', help: 'what the files hold (required)', choices: ['catalog', 'storefront'] }],
  },
  {
    name: 'keys create',
    summary: 'create an API key; it is printed once, as the last line of stdout',
    options: [DB, { flag: 'plan', value: '<plan>', help: 'the plan of the key (required)', choices: ['free', 'pro'] }, { flag: 'label', value: '<text>', help: 'a name to recognise the key by' }],
  },
  { name: 'keys list', summary: 'list the keys: id, label, plan, created, last used, revoked (never the key)', options: [DB, { flag: 'json', help: 'one JSON object per line instead of a table' }] },
  { name: 'keys revoke', summary: 'revoke a key, given the key or its id; every instance refuses it within 5 s', arguments: '<key-or-id>', options: [DB] },
  {
    name: 'prices publish',
    summary: 'append NDJSON price events from a file (or - for stdin) to the price log',
    arguments: '<file>',
    options: [DB, PRICE_LOG],
  },
  {
    name: 'prices simulate',
    summary: 'append simulated price events at a steady rate until interrupted',
    options: [
      DB,
      PRICE_LOG,
      { flag: 'rate', value: '<events/s>', help: 'events per second (required)' },
      { flag: 'variants', value: '<n>', default: '500', help: 'variants to simulate, sampled from the catalog when it has some' },
    ],
  },
  { name: 'migrate', summary: 'apply pending database migrations and say where the schema stands', options: [DB] },
];

export function commandSpec(name: string): CommandSpec {
  const spec = COMMANDS.find((command) => command.name === name);
  if (spec === undefined) throw new Error(`no command "${name}"`);
  return spec;
}

export type ParsedValues = Record<string, string | boolean | undefined>;
export type Parsed = { values: ParsedValues; positionals: string[] } | { exit: number };

/**
 * Parses `args` by the command's table: help on stdout with exit 0, a usage error on stderr with
 * exit 2, else the values by flag name (flag, then environment variable) and the positionals.
 * Defaults are applied by the caller, which validates the values.
 */
export function parseCommand(spec: CommandSpec, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Parsed {
  const program = new Command(`catalog ${spec.name}`)
    .description(spec.summary)
    .helpOption('-h, --help', 'show this help')
    .exitOverride()
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) })
    .showHelpAfterError('(run with --help for the options)');
  if (spec.arguments !== undefined) program.argument(spec.arguments);
  else program.allowExcessArguments(false);
  for (const option of spec.options) {
    const described = [option.help, option.env === undefined ? '' : `(env: ${option.env})`, option.default === undefined ? '' : `(default: ${option.default})`]
      .filter((part) => part !== '')
      .join(' ');
    const built = new Option(`--${option.flag}${option.value === undefined ? '' : ` ${option.value}`}`, described);
    if (option.choices !== undefined) built.choices(option.choices);
    program.addOption(built);
  }
  try {
    program.parse([...args], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return { exit: error.code === 'commander.helpDisplayed' || error.code === 'commander.help' ? 0 : 2 };
    throw error;
  }
  const given = program.opts<Record<string, string | boolean | undefined>>();
  const values: ParsedValues = {};
  for (const option of spec.options) {
    const key = option.flag.replace(/-([a-z])/g, (_m, letter: string) => letter.toUpperCase());
    const fromEnv = option.env === undefined ? undefined : env[option.env];
    values[option.flag] = given[key] ?? (fromEnv === '' ? undefined : fromEnv);
  }
  return { values, positionals: program.args };
}

/** The catalog database: the flag (or DATABASE_URL, already in `values`), else the default. */
export function databaseUrlOf(values: ParsedValues): string {
  return (values['db'] as string | undefined) ?? DEFAULT_DATABASE_URL;
}

/** The price log: the flag (or PRICE_LOG_URL), else the catalog database when it is SQLite. */
export function priceLogUrlOf(values: ParsedValues): string | undefined {
  const db = databaseUrlOf(values);
  return (values['price-log'] as string | undefined) ?? (db.startsWith('sqlite:') ? db : undefined);
}
