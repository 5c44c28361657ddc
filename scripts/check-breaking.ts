// `pnpm check:breaking`: compares the contract in specs/ (bundled afresh) with the last released
// contract in specs/released/, and fails when a change would break existing clients unless the
// major version in `info.version` has been raised. OpenAPI changes are classified by
// api-smart-diff, AsyncAPI changes by @asyncapi/diff (AsyncAPI's own). Changes a tool cannot
// classify are listed for a human to judge; they do not fail the check.
//
//   node scripts/check-breaking.ts [--released DIR] [--current DIR]
// DIR holds openapi.json and asyncapi.json; --current defaults to a fresh bundle of specs/.
// Releasing: raise `info.version` in the document(s), then copy specs/dist/*.json to specs/released/.
import { diff as asyncapiDiff } from '@asyncapi/diff';
import { apiCompare } from 'api-smart-diff';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

type Json = Record<string, unknown>;
type Kind = 'breaking' | 'non-breaking' | 'unclassified' | 'annotation' | 'deprecated';
interface Change {
  kind: Kind;
  where: string;
  what: string;
}

const root = join(import.meta.dirname, '..');
const { values } = parseArgs({ options: { released: { type: 'string' }, current: { type: 'string' } } });
const releasedDir = values.released ?? join(root, 'specs/released');
let currentDir = values.current;
if (currentDir === undefined) {
  execFileSync(process.execPath, [join(root, 'specs/scripts/bundle.ts')], { stdio: 'ignore' });
  currentDir = join(root, 'specs/dist');
}
const load = (dir: string, name: string): Json => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Json;

function openapiChanges(before: Json, after: Json): Change[] {
  return apiCompare(before, after).diffs.map((d) => ({
    kind: d.type as Kind,
    where: d.path.join('/'),
    what: d.description ?? `${d.action}`,
  }));
}

function asyncapiChanges(before: Json, after: Json): Change[] {
  const output = asyncapiDiff(before, after, {});
  const as = (kind: Kind, list: { action: string; path: string }[]): Change[] => list.map((d) => ({ kind, where: d.path, what: d.action }));
  return [
    ...as('breaking', output.breaking() as { action: string; path: string }[]),
    ...as('non-breaking', output.nonBreaking() as { action: string; path: string }[]),
    ...as('unclassified', output.unclassified() as { action: string; path: string }[]),
  ];
}

const major = (document: Json): number => Number(String((document['info'] as Json | undefined)?.['version'] ?? '0').split('.')[0]);

let failed = false;
for (const [name, compare] of [
  ['openapi.json', openapiChanges],
  ['asyncapi.json', asyncapiChanges],
] as const) {
  const before = load(releasedDir, name);
  const after = load(currentDir, name);
  const changes = compare(before, after);
  const breaking = changes.filter((change) => change.kind === 'breaking');
  const unclassified = changes.filter((change) => change.kind === 'unclassified');
  const [was, now] = [major(before), major(after)];
  process.stdout.write(`${name}: ${changes.length} change(s) since the released contract (version ${was}.x → ${now}.x)\n`);
  for (const change of [...breaking, ...unclassified]) process.stdout.write(`  ${change.kind.padEnd(12)} ${change.where}: ${change.what}\n`);
  const others = changes.length - breaking.length - unclassified.length;
  if (others > 0) process.stdout.write(`  and ${others} non-breaking change(s) or annotation(s)\n`);
  if (breaking.length > 0 && now <= was) {
    failed = true;
    process.stdout.write(`  ✗ ${breaking.length} breaking change(s) without a new major version: raise info.version to ${was + 1}.0.0, or undo them\n`);
  } else if (breaking.length > 0) {
    process.stdout.write(`  ✓ breaking change(s) allowed: the major version was raised\n`);
  }
}
process.exitCode = failed ? 1 : 0;
