// Every command's options (flag, value, environment variable, default, help), which drive parsing
// (commander), `--help`/`-h` and the README's configuration reference (scripts/config-reference.ts;
// a test fails when the README drifts). Every option with a value, a default or bounds comes from
// the typed tables in settings.ts (the service's, and one per other command), which the commands
// validate against; only the switches and choices of one-off commands are written here.
//
// Precedence everywhere: the flag, then its environment variable, then the default. The storage
// URLs follow one chain for every command: `--db` > DATABASE_URL > sqlite:./data/catalog.db, and
// `--price-log` > PRICE_LOG_URL > the catalog database when it is SQLite.
import { Command, CommanderError, Option } from 'commander';
import { configFrom, ConfigError, type Config } from '../config.ts';
import { MONITORS_ADD_SETTINGS, PRICES_PUBLISH_SETTINGS, PRICES_SIMULATE_SETTINGS, SEED_SETTINGS, SERVE_SETTINGS, type Setting, type SettingValues } from '../settings.ts';

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

/** A setting of settings.ts as an option: its default as users read it, a value or a rule. */
function optionOf(flag: string, setting: Setting): OptionSpec {
  const shown = setting.default === null ? (setting.defaultRule ?? null) : String(setting.default);
  return {
    flag,
    value: setting.value,
    ...(setting.env === undefined ? {} : { env: setting.env }),
    ...(shown === null ? {} : { default: shown }),
    help: setting.help,
    ...(setting.kind === 'text' && setting.choices !== undefined ? { choices: setting.choices } : {}),
  };
}

/** Every setting of a table, in its order. */
const optionsOf = (settings: Readonly<Record<string, Setting>>): OptionSpec[] => Object.entries(settings).map(([flag, setting]) => optionOf(flag, setting));

const DB = optionOf('db', SERVE_SETTINGS.db);
const PRICE_LOG = optionOf('price-log', SERVE_SETTINGS['price-log']);
const SERVE_OPTIONS: readonly OptionSpec[] = optionsOf(SERVE_SETTINGS);

export const COMMANDS: readonly CommandSpec[] = [
  { name: 'serve', summary: 'run the HTTP API and the price stream until SIGTERM', options: SERVE_OPTIONS },
  { name: 'start', summary: 'seed a demo catalog when none exists, create demo keys, serve with simulated prices', options: SERVE_OPTIONS },
  {
    name: 'seed',
    summary: 'write a deterministic synthetic catalog into the database, or as NDJSON files',
    options: [DB, ...optionsOf(SEED_SETTINGS)],
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
    name: 'monitors add',
    summary: "create a price monitor of a Pro key; its whsec_ signing secret is printed once, as the last line of stdout",
    options: [
      DB,
      PRICE_LOG,
      { flag: 'key', value: '<key-or-id>', help: 'the Pro key the monitor belongs to: the key, or its id from `catalog keys list` (required)' },
      { flag: 'url', value: '<url>', help: 'the https:// endpoint the priceChanged webhook is POSTed to (required)' },
      { flag: 'filter', value: '<expression>', help: 'the price events to watch, in the stream\'s Filter language, e.g. \'product_id IN ["…"] AND market = "US"\' (required)' },
      ...optionsOf(MONITORS_ADD_SETTINGS),
      { flag: 'allow-http', help: 'accept an http:// URL (a receiver in development)' },
    ],
  },
  { name: 'monitors list', summary: 'list the monitors and their delivery state (never their secrets)', options: [DB, { flag: 'key', value: '<key>', help: "only this key's monitors" }, { flag: 'json', help: 'one JSON object per line instead of a table' }] },
  { name: 'monitors remove', summary: 'remove a monitor and whatever it had not delivered', arguments: '<monitor-id>', options: [DB] },
  { name: 'monitors enable', summary: 'enable a disabled monitor again; what it had not delivered is sent at once', arguments: '<monitor-id>', options: [DB] },
  {
    name: 'prices publish',
    summary: 'append NDJSON price events from a file (or - for stdin) to the price log',
    arguments: '<file>',
    options: [DB, PRICE_LOG, ...optionsOf(PRICES_PUBLISH_SETTINGS)],
  },
  {
    name: 'prices simulate',
    summary: 'append simulated price events at a steady rate until interrupted',
    options: [DB, PRICE_LOG, ...optionsOf(PRICES_SIMULATE_SETTINGS)],
  },
  { name: 'migrate', summary: 'apply pending database migrations and say where the schema stands', options: [DB] },
];

export function commandSpec(name: string): CommandSpec {
  const spec = COMMANDS.find((command) => command.name === name);
  if (spec === undefined) throw new Error(`no command "${name}"`);
  return spec;
}

export type Parsed = { values: SettingValues; positionals: string[] } | { exit: number };

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
  const values: SettingValues = {};
  for (const option of spec.options) {
    const key = option.flag.replace(/-([a-z])/g, (_m, letter: string) => letter.toUpperCase());
    const fromEnv = option.env === undefined ? undefined : env[option.env];
    values[option.flag] = given[key] ?? (fromEnv === '' ? undefined : fromEnv);
  }
  return { values, positionals: program.args };
}

/**
 * Reads the serve flags (the `serve` table above; `start` shares it); `args` excludes the command
 * name. Throws ConfigError for a bad value, and for `--help` or a usage error, which parseCommand
 * has already answered on stdout or stderr (`exitCode` says how to exit).
 */
export function loadConfig(args: readonly string[], env: NodeJS.ProcessEnv = process.env, command: 'serve' | 'start' = 'serve'): Config {
  const parsed = parseCommand(commandSpec(command), args, env);
  if ('exit' in parsed) throw new ConfigError(parsed.exit === 0 ? '' : 'invalid arguments', parsed.exit);
  return configFrom(parsed.values);
}
