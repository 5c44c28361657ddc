// Every command explains itself: `--help` and `-h` print its options on stdout with exit status 0,
// `catalog --version` prints the version, an unknown flag is a usage error (2), and the README's
// configuration reference is exactly what the option tables render. Each command's parser is driven
// in this process (parseCommand is what every command runs first); one spawned `catalog` per path
// (command help, top-level help and version, a usage error) shows main.ts wires it to the process.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { COMMANDS, parseCommand } from '../../src/cli/command-line.ts';
import { renderConfigReference, END_MARKER, START_MARKER } from '../../src/cli/config-reference.ts';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import { buildPriceEvent } from '@catalog/contract/testing';
import { runCli } from './run-cli.ts';

const ROOT = join(import.meta.dirname, '../../../..');

/** What parseCommand exits with and writes to stdout and stderr, as the process would show it. */
function parseInProcess(name: string, args: readonly string[]): { exit: number | undefined; stdout: string; stderr: string } {
  const command = COMMANDS.find((candidate) => candidate.name === name)!;
  const written = { stdout: '', stderr: '' };
  const capture = (stream: 'stdout' | 'stderr') =>
    vi.spyOn(process[stream], 'write').mockImplementation((chunk: string | Uint8Array) => {
      written[stream] += String(chunk);
      return true;
    });
  const spies = [capture('stdout'), capture('stderr')];
  try {
    const parsed = parseCommand(command, args, {});
    return { exit: 'exit' in parsed ? parsed.exit : undefined, ...written };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

describe('catalog --help, -h and --version', () => {
  it.each(COMMANDS.map((command) => [command.name]))('catalog %s --help and -h list every option on stdout and exit 0', (name) => {
    const command = COMMANDS.find((candidate) => candidate.name === name)!;
    for (const flag of ['--help', '-h']) {
      const result = parseInProcess(name, [flag]);
      expect(result.exit, result.stderr).toBe(0);
      expect(result.stdout).toContain(`Usage: catalog ${name}`);
      for (const option of command.options) {
        expect(result.stdout).toContain(`--${option.flag}`);
        if (option.env !== undefined) expect(result.stdout).toContain(option.env);
      }
    }
  });

  it('prints a command\'s help from the catalog process too: stdout, exit status 0', async () => {
    const result = await runCli(['keys', 'create', '--help']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Usage: catalog keys create');
    expect(result.stdout).toBe(parseInProcess('keys create', ['--help']).stdout);
  });

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
    for (const [name, ...args] of [['serve', '--prot', '8080'], ['seed', '--producst', '5'], ['keys list', '--jsno']] as const) {
      const result = parseInProcess(name, args);
      expect(result.exit, `${name} ${args.join(' ')}`).toBe(2);
      expect(result.stderr).toMatch(/unknown option/);
      expect(result.stdout).toBe('');
    }
    const spawned = await runCli(['keys', 'list', '--jsno']);
    expect(spawned.code).toBe(2);
    expect(spawned.stderr).toMatch(/unknown option '--jsno'/);
    expect(spawned.stdout).toBe('');
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
