// Every command explains itself: `--help` and `-h` print its options on stdout with exit status 0,
// `catalog --version` prints the version, an unknown flag is a usage error (2), and the README's
// configuration reference is exactly what the option tables render.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/command-line.ts';
import { renderConfigReference, END_MARKER, START_MARKER } from '../../src/cli/config-reference.ts';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import { buildPriceEvent } from '@catalog/contract/testing';
import { runCli } from './run-cli.ts';

const ROOT = join(import.meta.dirname, '../../../..');

describe('catalog --help, -h and --version', () => {
  it.each(COMMANDS.map((command) => [command.name]))('catalog %s --help and -h list every option on stdout and exit 0', async (name) => {
    const command = COMMANDS.find((candidate) => candidate.name === name)!;
    for (const flag of ['--help', '-h']) {
      const result = await runCli([...name.split(' '), flag]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`Usage: catalog ${name}`);
      for (const option of command.options) {
        expect(result.stdout).toContain(`--${option.flag}`);
        if (option.env !== undefined) expect(result.stdout).toContain(option.env);
      }
    }
  }, 60_000);

  it('lists every command on catalog --help and -h, and prints the version on --version', async () => {
    for (const flag of ['--help', '-h']) {
      const result = await runCli([flag]);
      expect(result.code).toBe(0);
      for (const command of COMMANDS) expect(result.stdout).toContain(command.name);
    }
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout).toBe(`${(JSON.parse(readFileSync(join(ROOT, 'packages/server/package.json'), 'utf8')) as { version: string }).version}\n`);
  });

  it('refuses an unknown flag with exit status 2 and says so on stderr', async () => {
    for (const args of [['serve', '--prot', '8080'], ['seed', '--producst', '5'], ['keys', 'list', '--jsno']]) {
      const result = await runCli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/unknown option/);
      expect(result.stdout).toBe('');
    }
  });

  it('has the README configuration reference the option tables render', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf(START_MARKER), readme.indexOf(END_MARKER) + END_MARKER.length);
    expect(section, 'run pnpm docs:config').toBe(renderConfigReference());
  });
});

describe('one default chain for the storage URLs', () => {
  it('prices publish follows DATABASE_URL when neither --price-log nor PRICE_LOG_URL is given', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-chain-'));
    try {
      const file = join(dir, 'catalog.db');
      const events = join(dir, 'events.ndjson');
      writeFileSync(events, `${JSON.stringify(buildPriceEvent())}\n`);
      const result = await runCli(['prices', 'publish', events], { DATABASE_URL: `sqlite:${file}`, PRICE_LOG_URL: '' });
      expect(result.code, result.stderr).toBe(0);
      const log = new SqlitePriceLog(file);
      try {
        expect(await log.readAfter(0, 10)).toHaveLength(1);
      } finally {
        await log.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
