import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config.ts';
import { COMMANDS, loadConfig } from '../src/cli/command-line.ts';
import { MONITORS_ADD_SETTINGS, PRICES_PUBLISH_SETTINGS, PRICES_SIMULATE_SETTINGS, SEED_SETTINGS, SERVE_SETTINGS, type ServeFlag, type Setting } from '../src/settings.ts';

/** Every setting of the table with a value default, and the Config field it sets. */
const FIELDS: Partial<Record<ServeFlag, keyof ReturnType<typeof loadConfig>>> = {
  db: 'databaseUrl',
  host: 'host',
  port: 'port',
  'sse-port': 'ssePort',
  'simulate-prices': 'simulatePrices',
  'auth-failure-limit': 'authFailuresPerMinute',
  'max-streams-per-key': 'maxStreamsPerKey',
  'max-connections': 'maxConnections',
  'max-stream-connections': 'maxStreamConnections',
  'headers-timeout-ms': 'headersTimeoutMs',
  'request-timeout-ms': 'requestTimeoutMs',
  'shutdown-delay-ms': 'shutdownDelayMs',
  'shutdown-grace-ms': 'shutdownGraceMs',
  'heartbeat-ms': 'heartbeatMs',
  'max-subscriber-buffer-bytes': 'maxSubscriberBufferBytes',
  'log-level': 'logLevel',
};

describe('loadConfig', () => {
  it('defaults to the embedded SQLite database for the catalog and the price log', () => {
    const config = loadConfig([], {});
    expect(config.databaseUrl).toBe('sqlite:./data/catalog.db');
    expect(config.priceLogUrl).toBe('sqlite:./data/catalog.db');
    expect(config.port).toBe(8080);
    expect(config.ssePort).toBe(8081);
    expect(config.heartbeatMs).toBe(15000);
  });

  it('takes every default from the settings table', () => {
    const config = loadConfig([], {});
    for (const [flag, field] of Object.entries(FIELDS) as [ServeFlag, keyof typeof config][]) {
      expect(config[field], flag).toBe(SERVE_SETTINGS[flag].default);
    }
    expect(config.rateLimitPerMinute).toEqual({ free: SERVE_SETTINGS['rate-limit-free'].default, pro: SERVE_SETTINGS['rate-limit-pro'].default });
    // Every setting with a value default is read into the Config (the rest are rules: see FIELDS' gaps).
    const withValue = (Object.keys(SERVE_SETTINGS) as ServeFlag[]).filter((flag) => SERVE_SETTINGS[flag].default !== null);
    expect(withValue.filter((flag) => FIELDS[flag] === undefined)).toEqual([
      'rate-limit-free',
      'rate-limit-pro',
      'monitor-retry-schedule',
      'monitor-timeout-ms',
      'monitor-endpoint-concurrency',
      'monitor-private-endpoints',
    ]);
    // The monitors' settings, read into their own part of the Config.
    expect(config.monitors).toEqual({
      retryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      timeoutMs: SERVE_SETTINGS['monitor-timeout-ms'].default,
      endpointConcurrency: SERVE_SETTINGS['monitor-endpoint-concurrency'].default,
      allowPrivateEndpoints: false,
    });
  });

  it('sets every setting by its flag and by its environment variable', () => {
    expect(loadConfig(['--max-subscriber-buffer-bytes', '262144', '--shutdown-grace-ms', '2500'], {})).toMatchObject({ maxSubscriberBufferBytes: 262_144, shutdownGraceMs: 2500 });
    expect(loadConfig([], { MAX_SUBSCRIBER_BUFFER_BYTES: '131072', SHUTDOWN_GRACE_MS: '0' })).toMatchObject({ maxSubscriberBufferBytes: 131_072, shutdownGraceMs: 0 });
  });

  it('reads a shortened monitor retry schedule, and refuses one it cannot read', () => {
    expect(loadConfig(['--monitor-retry-schedule', '0s,250ms,1s'], {}).monitors.retryScheduleMs).toEqual([0, 250, 1000]);
    expect(() => loadConfig([], { MONITOR_RETRY_SCHEDULE: '5 minutes' })).toThrow(/--monitor-retry-schedule: "5 minutes" is not a delay/);
  });

  it('refuses a value outside the bounds the table gives', () => {
    expect(() => loadConfig(['--heartbeat-ms', '5'], {})).toThrow(new ConfigError('--heartbeat-ms must be an integer from 10 to 3600000, got "5"'));
    expect(() => loadConfig(['--simulate-prices', 'fast'], {})).toThrow(new ConfigError('--simulate-prices must be a number from 0 to 100000, got "fast"'));
    expect(() => loadConfig([], { RATE_LIMIT: '-1' })).toThrow(new ConfigError('--rate-limit must be an integer from 0 to 10000000, got "-1"'));
  });

  it('leaves tracing to the OTEL_* variables unless --tracing or CATALOG_TRACING says on or off', () => {
    expect(loadConfig([], {}).tracing).toBeUndefined();
    expect(loadConfig(['--tracing', 'on'], {}).tracing).toBe(true);
    expect(loadConfig([], { CATALOG_TRACING: 'off' }).tracing).toBe(false);
    expect(() => loadConfig([], { CATALOG_TRACING: 'yes' })).toThrow(new ConfigError('--tracing must be on or off, got "yes"'));
  });

  it('prefers flags over the environment', () => {
    const config = loadConfig(['--port', '9000', '--db', 'sqlite:/tmp/x.db'], { PORT: '7000', DATABASE_URL: 'sqlite:/tmp/y.db' });
    expect(config.port).toBe(9000);
    expect(config.databaseUrl).toBe('sqlite:/tmp/x.db');
  });

  it('refuses a port that is not an integer, naming the flag', () => {
    expect(() => loadConfig(['--port', 'eighty'], {})).toThrow(new ConfigError('--port must be an integer from 0 to 65535, got "eighty"'));
  });

  it('requires a price log when the catalog is PostgreSQL', () => {
    expect(() => loadConfig(['--db', 'postgres://localhost/catalog'], {})).toThrow(/--price-log/);
  });

  it('refuses an unknown storage scheme', () => {
    expect(() => loadConfig(['--db', 'mysql://x'], {})).toThrow(/--db must start with sqlite: or postgres: or postgresql:/);
  });
});

describe('the settings tables', () => {
  it('give every default of every command, as help and the README show it', () => {
    const tables: Record<string, Readonly<Record<string, Setting>>> = {
      seed: SEED_SETTINGS,
      'prices publish': PRICES_PUBLISH_SETTINGS,
      'prices simulate': PRICES_SIMULATE_SETTINGS,
      'monitors add': MONITORS_ADD_SETTINGS,
    };
    for (const command of COMMANDS) {
      for (const option of command.options) {
        if (option.default === undefined) continue;
        const setting = tables[command.name]?.[option.flag] ?? (SERVE_SETTINGS as Readonly<Record<string, Setting>>)[option.flag];
        expect(setting, `${command.name} --${option.flag}`).toBeDefined();
        expect(option.default, `${command.name} --${option.flag}`).toBe(setting!.default === null ? setting!.defaultRule : String(setting!.default));
      }
    }
  });
});
