import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('loadConfig', () => {
  it('defaults to the embedded SQLite database for the catalog and the price log', () => {
    const config = loadConfig([], {});
    expect(config.databaseUrl).toBe('sqlite:./data/catalog.db');
    expect(config.priceLogUrl).toBe('sqlite:./data/catalog.db');
    expect(config.port).toBe(8080);
    expect(config.ssePort).toBe(8081);
    expect(config.heartbeatMs).toBe(15000);
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
