// `catalog migrate` as an operator runs it, against a throw-away PostgreSQL database and a
// temporary SQLite file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/postgres-test-database.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';
import { runCli } from './run-cli.ts';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'migrate-'));
let database: TestDatabase | undefined;

afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await database?.drop();
});

describe('catalog migrate', () => {
  it('applies the PostgreSQL migrations once, then reports the schema up to date', async () => {
    database = await createTestDatabase();
    const first = await runCli(['migrate', '--db', database.url()]);
    const versions = POSTGRES_MIGRATIONS.map((migration) => migration.version);
    const latest = Math.max(...versions);
    expect(first).toMatchObject({ code: 0, stdout: `applied postgres migrations ${versions.join(', ')}; schema is at version ${latest}\n` });
    const second = await runCli(['migrate'], { DATABASE_URL: database.url() });
    expect(second).toMatchObject({ code: 0, stdout: `postgres schema is up to date (version ${latest})\n` });
  });

  it('migrates a new SQLite file', async () => {
    const file = path.join(dir, 'nested', 'catalog.db');
    const result = await runCli(['migrate', '--db', `sqlite:${file}`]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^sqlite schema is at version \d+\n$/u);
    expect(fs.existsSync(file)).toBe(true);
  });

  it('exits 1 with a one-line message when PostgreSQL is unreachable', async () => {
    const proxy = await startTcpProxy('127.0.0.1', 5432);
    proxy.cut();
    try {
      const result = await runCli(['migrate', '--db', `postgres://postgres@127.0.0.1:${proxy.port}/postgres`]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('catalog migrate: The catalog database is unavailable; retry shortly.');
      expect(result.stderr).not.toMatch(/\n\s+at /u);
    } finally {
      await proxy.close();
    }
  });
});
