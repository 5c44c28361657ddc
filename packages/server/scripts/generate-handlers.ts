// Writes a handler stub for each operation of the contract's table that has none, and the generated
// handler map and stub test (scripts/handler-files.ts says which files and why): `pnpm generate`.
// With --check it writes nothing and fails when a handler file is missing or a generated file
// differs from a fresh generation (`pnpm check:generated`, in CI).
import { join } from 'node:path';
import { operations } from '@catalog/contract';
import { generateHandlers, handlerDrift } from './handler-files.ts';

const serverDir = join(import.meta.dirname, '..');

if (process.argv.includes('--check')) {
  const drift = handlerDrift(operations, serverDir);
  if (drift.length > 0) {
    console.error(`Generated handler files are stale: regenerate with \`pnpm generate\` and commit.\n  ${drift.join('\n  ')}`);
    process.exitCode = 1;
  } else {
    console.log('Generated handler files are up to date.');
  }
} else {
  const { written, stubs } = generateHandlers(operations, serverDir);
  for (const path of written) console.log(`wrote the stub ${path}: write its body and its test`);
  console.log(`wrote src/http/handlers/generated/handlers.gen.ts and test/http/generated/handlers.gen.test.ts (${stubs.length} stub(s) left${stubs.length > 0 ? `: ${stubs.join(', ')}` : ''})`);
}
