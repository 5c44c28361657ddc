// `catalog keys create --db <url> --plan free|pro [--label L]`: stores a new key's digest and prints
// the key as the last (and only) line of stdout; it cannot be shown again.
import { parseArgs } from 'node:util';
import { silentLogger } from '../logger.ts';
import { openCatalogStores } from '../store/open-store.ts';
import { databaseUrl, UsageError } from './cli-support.ts';

const USAGE = 'usage: catalog keys create [--db <url>] --plan free|pro [--label <label>]';

export async function run(args: string[]): Promise<number> {
  let plan: 'free' | 'pro';
  let db: string;
  let label: string | undefined;
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { db: { type: 'string' }, plan: { type: 'string' }, label: { type: 'string' } },
    });
    if (positionals.length !== 1 || positionals[0] !== 'create') throw new UsageError(USAGE);
    if (values.plan !== 'free' && values.plan !== 'pro') throw new UsageError(`--plan must be free or pro\n${USAGE}`);
    plan = values.plan;
    db = databaseUrl(values.db);
    label = values.label;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const stores = await openCatalogStores(db, silentLogger);
  try {
    const key = await stores.keys.createKey(plan, label);
    process.stderr.write(`created a ${plan} key${label === undefined ? '' : ` (${label})`}; it is shown only once:\n`);
    process.stdout.write(`${key}\n`);
    return 0;
  } finally {
    await stores.close();
  }
}
