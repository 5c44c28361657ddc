// `pnpm docs:config`: rewrites the README's configuration reference from the option tables.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withConfigReference } from '../src/cli/config-reference.ts';

const readme = join(import.meta.dirname, '../../../README.md');
writeFileSync(readme, withConfigReference(readFileSync(readme, 'utf8')));
console.log('wrote the configuration reference in README.md');
