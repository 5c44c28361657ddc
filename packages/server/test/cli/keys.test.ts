import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { runCli } from './run-cli.ts';

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
    expect(result.stderr).toContain('--plan must be free or pro');
  });
});
