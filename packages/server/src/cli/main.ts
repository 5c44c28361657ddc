#!/usr/bin/env node
// `pnpm catalog <command>`: each command lives in its own module, loaded on demand so that a
// command pulls in only the drivers it uses.
const COMMANDS: Record<string, { module: string; summary: string }> = {
  serve: { module: './serve.ts', summary: 'run the API and stream listeners' },
  start: { module: './start.ts', summary: 'seed a demo catalog when none exists, create demo keys, serve' },
  seed: { module: './seed.ts', summary: 'write a deterministic synthetic catalog' },
  import: { module: './import.ts', summary: 'upsert NDJSON catalog or storefront products' },
  keys: { module: './keys.ts', summary: 'create API keys (keys create --plan free|pro)' },
  prices: { module: './prices.ts', summary: 'publish or simulate price events' },
  migrate: { module: './migrate.ts', summary: 'apply database migrations' },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, { summary }]) => `  ${name.padEnd(8)} ${summary}`);
  return `usage: catalog <command> [flags]\n\ncommands:\n${lines.join('\n')}\n`;
}

// Through `pnpm catalog …` or `pnpm start` the script runs in packages/server; relative paths (FILE
// arguments, sqlite:./data/…) mean what the user typed them against: the directory pnpm was
// invoked from. Processes spawned by tests inherit INIT_CWD but run under another script name.
const invokedFrom = process.env['INIT_CWD'];
const script = process.env['npm_lifecycle_event'];
if (invokedFrom && (script === 'catalog' || script === 'start')) process.chdir(invokedFrom);

const [name, ...rest] = process.argv.slice(2);
const command = name === undefined ? undefined : COMMANDS[name];
if (command === undefined) {
  process.stderr.write(name === undefined || name === '--help' ? usage() : `unknown command "${name}"\n\n${usage()}`);
  process.exit(name === undefined || name === '--help' ? 0 : 2);
}
const loaded = (await import(command.module)) as { run(args: string[]): Promise<number | void> };
try {
  const code = await loaded.run(rest);
  if (typeof code === 'number' && code !== 0) process.exitCode = code;
} catch (error) {
  process.stderr.write(`catalog ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
