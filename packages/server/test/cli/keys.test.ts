import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres-test-database.ts';
import { run as keysCommand } from '../../src/cli/keys.ts';
import { MAIN, runCli, runInProcess } from './run-cli.ts';

describe('catalog keys create', () => {
  let dir: string;
  let db: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-keys-'));
    db = `sqlite:${join(dir, 'catalog.db')}`;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('prints only the new key on stdout, and the key has the requested plan', async () => {
    const pro = await runCli(['keys', 'create', '--db', db, '--plan', 'pro', '--label', 'ci']);
    const free = await runCli(['keys', 'create', '--plan', 'free'], { DATABASE_URL: db });
    expect(pro.code).toBe(0);
    expect(free.code).toBe(0);
    const proKey = pro.stdout.trimEnd().split('\n').at(-1)!;
    const freeKey = free.stdout.trimEnd().split('\n').at(-1)!;
    expect(pro.stdout).toBe(`${proKey}\n`);
    expect(proKey).toMatch(/^ck_[A-Za-z0-9_-]{32}$/u);
    const stores = await openCatalogStores(db, silentLogger);
    try {
      expect(await stores.keys.findPlan(proKey)).toBe('pro');
      expect(await stores.keys.findPlan(freeKey)).toBe('free');
    } finally {
      await stores.close();
    }
  });

  it('refuses an unknown plan with exit status 2 and nothing on stdout', async () => {
    const result = await runCli(['keys', 'create', '--db', db, '--plan', 'gold']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain("argument 'gold' is invalid. Allowed choices are free, pro.");
  });
});

// The command in this process; `catalog keys create` above and below runs as its own process.
describe.each(['sqlite', 'postgres'] as const)('catalog keys list and revoke on %s', (engine) => {
  let dir: string;
  let db: string;
  let database: TestDatabase | undefined;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cli-keys-'));
    database = engine === 'postgres' ? await createTestDatabase() : undefined;
    db = database?.url() ?? `sqlite:${join(dir, 'catalog.db')}`;
  });
  afterEach(async () => {
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists id, label, plan, created, last used and revoked, never the key; revokes by id or by key', async () => {
    const pro = (await runInProcess(keysCommand, ['create', '--db', db, '--plan', 'pro', '--label', 'team a'])).stdout.trim();
    const free = (await runInProcess(keysCommand, ['create', '--db', db, '--plan', 'free'])).stdout.trim();
    const stores = await openCatalogStores(db, silentLogger);
    try {
      expect(await stores.keys.findPlan(pro)).toBe('pro');
    } finally {
      await stores.close();
    }
    const listed = await runInProcess(keysCommand, ['list', '--db', db, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const keys = listed.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, string | null>);
    expect(keys.map((key) => [key['plan'], key['label'], key['revokedAt']])).toEqual([['pro', 'team a', null], ['free', null, null]]);
    expect(keys[0]!['id']).toMatch(/^key_[0-9a-f]{12}$/);
    expect(keys[0]!['lastUsedAt']).not.toBeNull();
    expect(keys[1]!['lastUsedAt']).toBeNull();
    expect(listed.stdout).not.toContain(pro);
    const table = await runInProcess(keysCommand, ['list', '--db', db]);
    expect(table.stdout.split('\n')[0]).toMatch(/^id\s+plan\s+label\s+created\s+last used\s+revoked$/);
    expect(table.stdout).not.toContain(free);

    const byId = await runInProcess(keysCommand, ['revoke', '--db', db, keys[0]!['id']!]);
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.stdout).toContain(`revoked ${keys[0]!['id']}`);
    const byKey = await runInProcess(keysCommand, ['revoke', free, '--db', db]);
    expect(byKey.code, byKey.stderr).toBe(0);
    expect((await runInProcess(keysCommand, ['revoke', '--db', db, 'key_000000000000'])).code).toBe(1);
    const after = await openCatalogStores(db, silentLogger);
    try {
      expect([await after.keys.findPlan(pro), await after.keys.findPlan(free)]).toEqual([null, null]);
      expect((await after.keys.listKeys()).every((key) => key.revokedAt !== null)).toBe(true);
    } finally {
      await after.close();
    }
  });
});

describe('a key revoked while serve runs', () => {
  it('is refused by the running server within 5 s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-keys-'));
    const db = `sqlite:${join(dir, 'catalog.db')}`;
    const key = (await runCli(['keys', 'create', '--db', db, '--plan', 'pro'])).stdout.trim();
    const child = spawn(process.execPath, [MAIN, 'serve', '--db', db, '--port', '0', '--sse-port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      const apiUrl = await new Promise<string>((resolve, reject) => {
        let output = '';
        child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
          output += chunk;
          const line = output.split('\n').find((text) => text.includes('"listening"'));
          if (line !== undefined) resolve((JSON.parse(line) as { apiUrl: string }).apiUrl);
        });
        child.on('exit', () => reject(new Error(output)));
      });
      const count = () => fetch(`${apiUrl}/gtin/count`, { headers: { Authorization: `Bearer ${key}` } }).then((response) => response.status);
      expect(await count()).toBe(200);
      expect((await runCli(['keys', 'revoke', '--db', db, key])).code).toBe(0);
      const revokedAt = Date.now();
      await expect.poll(count, { timeout: 7_000, interval: 200 }).toBe(401);
      expect(Date.now() - revokedAt).toBeLessThan(6_000);
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
