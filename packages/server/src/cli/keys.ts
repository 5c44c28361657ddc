// `catalog keys create|list|revoke`: API keys for the operator.
// - create: stores a new key's digest and prints the key as the last (and only) line of stdout; it
//   cannot be shown again;
// - list: id, label, plan, created, last used, revoked, as a table (or JSON lines); never the key;
// - revoke <key|id>: every running instance refuses the key within its key cache's lifetime
//   (5 s, http/auth.ts); streams already open stay open until they end.
import { silentLogger } from '../logger.ts';
import type { KeyInfo } from '../store/key-store.ts';
import { openCatalogStores } from '../store/open-store.ts';
import { commandSpec, parseCommand } from './command-line.ts';
import { databaseUrlOf } from '../settings.ts';

const SUBCOMMANDS = ['create', 'list', 'revoke'] as const;

export async function run(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || !(SUBCOMMANDS as readonly string[]).includes(sub)) {
    const usage = `usage: catalog keys <create|list|revoke> [options]\n\n${SUBCOMMANDS.map((name) => `  ${name.padEnd(8)} ${commandSpec(`keys ${name}`).summary}`).join('\n')}\n`;
    const help = sub === '--help' || sub === '-h';
    (help ? process.stdout : process.stderr).write(sub === undefined || help ? usage : `unknown keys command "${sub}"\n\n${usage}`);
    return help ? 0 : 2;
  }
  const parsed = parseCommand(commandSpec(`keys ${sub}`), rest);
  if ('exit' in parsed) return parsed.exit;
  const { values, positionals } = parsed;
  if (sub === 'create' && values['plan'] === undefined) {
    process.stderr.write('--plan is required: free or pro\n');
    return 2;
  }
  const stores = await openCatalogStores(databaseUrlOf(values), silentLogger);
  try {
    switch (sub) {
      case 'create': {
        const plan = values['plan'] as 'free' | 'pro';
        const label = values['label'] as string | undefined;
        const key = await stores.keys.createKey(plan, label);
        process.stderr.write(`created a ${plan} key${label === undefined ? '' : ` (${label})`}; it is shown only once:\n`);
        process.stdout.write(`${key}\n`);
        return 0;
      }
      case 'list': {
        const keys = await stores.keys.listKeys();
        process.stdout.write(values['json'] === true ? keys.map((key) => `${JSON.stringify(key)}\n`).join('') : table(keys));
        return 0;
      }
      default: {
        const revoked = await stores.keys.revokeKey(positionals[0]!);
        if (revoked === null) {
          process.stderr.write('no such key: give the key itself or its id from `catalog keys list`\n');
          return 1;
        }
        process.stdout.write(`revoked ${revoked.id} (${revoked.plan}${revoked.label === null ? '' : `, ${revoked.label}`}) at ${revoked.revokedAt}; running instances refuse it within 5 s\n`);
        return 0;
      }
    }
  } finally {
    await stores.close();
  }
}

function table(keys: readonly KeyInfo[]): string {
  const rows = [
    ['id', 'plan', 'label', 'created', 'last used', 'revoked'],
    ...keys.map((key) => [key.id, key.plan, key.label ?? '', key.createdAt, key.lastUsedAt ?? 'never', key.revokedAt ?? '']),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => `${row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()}\n`).join('');
}
