#!/usr/bin/env node
// `pnpm catalog <command>`: each command lives in its own module, loaded on demand so that a
// command pulls in only the drivers it uses; its options are its table in command-line.ts.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config.ts';
import { COMMANDS } from './command-line.ts';
const MODULES: Record<string, string> = {
  serve: './serve.ts',
  start: './start.ts',
  seed: './seed.ts',
  import: './import.ts',
  keys: './keys.ts',
  monitors: './monitors.ts',
  prices: './prices.ts',
  migrate: './migrate.ts',
};

function usage(): string {
  const lines = COMMANDS.map((command) => `  ${command.name.padEnd(16)} ${command.summary}`);
  return `usage: catalog <command> [options]\n\ncommands:\n${lines.join('\n')}\n\nRun catalog <command> --help for a command's options; catalog --version for the version.\n`;
}

// Through `pnpm catalog …` or `pnpm start` the script runs in packages/server; relative paths (FILE
// arguments, sqlite:./data/…) mean what the user typed them against: the directory pnpm was
// invoked from. Processes spawned by tests inherit INIT_CWD but run under another script name.
const invokedFrom = process.env['INIT_CWD'];
const script = process.env['npm_lifecycle_event'];
if (invokedFrom && (script === 'catalog' || script === 'start')) process.chdir(invokedFrom);

const [name, ...rest] = process.argv.slice(2);
if (name === '--version' || name === '-V') {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${manifest.version}\n`);
  process.exit(0);
}
const module = name === undefined ? undefined : MODULES[name];
if (module === undefined) {
  const help = name === undefined || name === '--help' || name === '-h';
  if (help) process.stdout.write(usage());
  else process.stderr.write(`unknown command "${name}"\n\n${usage()}`);
  process.exit(help ? 0 : 2);
}
const loaded = (await import(module)) as { run(args: string[]): Promise<number | void> };
try {
  const code = await loaded.run(rest);
  if (typeof code === 'number' && code !== 0) process.exitCode = code;
} catch (error) {
  if (error instanceof ConfigError) {
    // A usage error or --help was answered by the parser already; a bad value is said here.
    if (error.message !== '' && error.message !== 'invalid arguments') process.stderr.write(`catalog ${name}: ${error.message}\n`);
    process.exitCode = error.exitCode;
  } else {
    process.stderr.write(`catalog ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
