// `pnpm check:breaking`: compares the contract in specs/ (bundled afresh) with the last released
// contract in specs/released/, and fails when the pending changesets (.changeset/*.md) do not ask for
// the version the changes need: a major version for a change that would break existing clients, at
// least a minor one for an addition or a deprecation, at least a patch for any other change to the
// documents. OpenAPI changes are classified by api-smart-diff, AsyncAPI changes by @asyncapi/diff
// (AsyncAPI's own). Changes a tool cannot classify are listed for a human to judge; they need a patch.
// The documents' `info.version` is written by the release (`pnpm release`) and must equal the
// version of @catalog/api-documents, the package that publishes them.
//
// Every change is printed, one row each: its classification, where it is, what it is, and the rule
// that classified it (the tool's rule, as the kind of change at that kind of place, and for the
// common breaking ones why it breaks a client). --breaking-only prints only the rows that decide.
//
//   node scripts/check-breaking.ts [--released DIR] [--current DIR] [--changesets DIR] [--breaking-only]
// DIR holds openapi.json and asyncapi.json; --current defaults to a fresh bundle of specs/,
// --changesets to .changeset/.
import { diff as asyncapiDiff } from '@asyncapi/diff';
import { apiCompare } from 'api-smart-diff';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Bump, BUMPS, bumpVersion, contractPackages, documentsVersion, larger, pendingBump, readChangesets } from './changesets.ts';

type Json = Record<string, unknown>;
type Kind = 'breaking' | 'non-breaking' | 'unclassified' | 'annotation' | 'deprecated';
interface Change {
  kind: Kind;
  where: string;
  what: string;
  /** The rule that classified the change. */
  rule: string;
}

const root = join(import.meta.dirname, '..');
const { values } = parseArgs({
  options: { released: { type: 'string' }, current: { type: 'string' }, changesets: { type: 'string' }, 'breaking-only': { type: 'boolean', default: false } },
});
const releasedDir = values.released ?? join(root, 'specs/released');
const changesetDir = values.changesets ?? join(root, '.changeset');
let currentDir = values.current;
if (currentDir === undefined) {
  execFileSync(process.execPath, [join(root, 'specs/scripts/bundle.ts')], { stdio: 'ignore' });
  currentDir = join(root, 'specs/dist');
}
const load = (dir: string, name: string): Json => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Json;

/** The place a rule applies to: names of paths, channels, schemas, properties and indexes become placeholders. */
function pattern(path: readonly (string | number)[]): string {
  const NAMED: Record<string, string> = { paths: '{path}', channels: '{channel}', schemas: '{schema}', properties: '{property}', parameters: '{parameter}', messages: '{message}' };
  return path.map((segment, index) => {
    const named = NAMED[String(path[index - 1])];
    if (named !== undefined) return named;
    return typeof segment === 'number' || /^\d+$/.test(String(segment)) && path[index - 1] !== 'responses' ? '{n}' : String(segment);
  }).join('/');
}

/** Why the common breaking changes break a client; the rest are named by their rule alone. */
function whyBreaking(action: string, path: readonly (string | number)[]): string | undefined {
  const last = String(path.at(-1));
  const parent = String(path.at(-2));
  if (action === 'remove' && path[0] === 'paths') return path.length <= 3 ? 'a removed operation fails every caller' : 'something a client sends or reads is gone';
  if (action === 'add' && path.includes('parameters')) return 'a new required parameter fails every request without it';
  if (parent === 'properties' && action === 'remove') return 'a client reading the field finds nothing';
  if (last === 'required') return 'a newly required field or parameter fails requests without it';
  if (last === 'type' || last === 'enum' || last === 'pattern' || last.startsWith('max') || last.startsWith('min')) return 'a value accepted before is refused, or a value read before has another shape';
  if (action === 'remove' && path[0] === 'channels') return 'a removed channel fails every subscriber';
  return undefined;
}

function ruleFor(tool: string, kind: Kind, action: string, path: readonly (string | number)[]): string {
  const rule = `${tool}: ${action} at ${pattern(path)}`;
  const why = kind === 'breaking' ? whyBreaking(action, path) : undefined;
  return why === undefined ? rule : `${rule} (${why})`;
}

function openapiChanges(before: Json, after: Json): Change[] {
  return apiCompare(before, after).diffs.map((d) => ({
    kind: d.type as Kind,
    where: d.path.join('/'),
    what: d.description ?? `${d.action}`,
    rule: ruleFor('api-smart-diff', d.type as Kind, d.action, d.path),
  }));
}

function asyncapiChanges(before: Json, after: Json): Change[] {
  const output = asyncapiDiff(before, after, {});
  const as = (kind: Kind, list: { action: string; path: string }[]): Change[] =>
    list.map((d) => {
      const path = d.path.split('/').filter((segment) => segment !== '').map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
      return { kind, where: path.join('/'), what: d.action, rule: ruleFor('@asyncapi/diff standard', kind, d.action, path) };
    });
  return [
    ...as('breaking', output.breaking() as { action: string; path: string }[]),
    ...as('non-breaking', output.nonBreaking() as { action: string; path: string }[]),
    ...as('unclassified', output.unclassified() as { action: string; path: string }[]),
  ];
}

/** The least version bump a change needs. */
const BUMP_FOR: Record<Kind, Bump> = { breaking: 'major', 'non-breaking': 'minor', deprecated: 'minor', annotation: 'patch', unclassified: 'patch' };
const version = (document: Json): string => String((document['info'] as Json | undefined)?.['version']);

const released = documentsVersion();
let failed = false;
let required: Bump = 'none';
for (const [name, compare] of [
  ['openapi.json', openapiChanges],
  ['asyncapi.json', asyncapiChanges],
] as const) {
  const before = load(releasedDir, name);
  const after = load(currentDir, name);
  const changes = compare(before, after);
  const breaking = changes.filter((change) => change.kind === 'breaking');
  process.stdout.write(`${name}: ${changes.length} change(s) since the released contract (version ${version(before)})\n`);
  const decisive = new Set<Kind>(['breaking', 'unclassified']);
  const shown = values['breaking-only'] ? changes.filter((change) => decisive.has(change.kind)) : changes;
  // Breaking first, then unclassified, then the rest: what decides the check is at the top.
  const order: Kind[] = ['breaking', 'unclassified', 'deprecated', 'non-breaking', 'annotation'];
  shown.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
  if (shown.length > 0) process.stdout.write(table(shown));
  const hidden = changes.length - shown.length;
  if (hidden > 0) process.stdout.write(`  and ${hidden} non-breaking change(s) or annotation(s) (run without --breaking-only to list them)\n`);
  if (breaking.length > 0) process.stdout.write(`  ${breaking.length} breaking change(s): releasing them needs a major version\n`);
  required = changes.reduce<Bump>((bump, change) => larger(bump, BUMP_FOR[change.kind]), required);
  if (version(after) !== released) {
    failed = true;
    process.stdout.write(`  ✗ info.version is ${version(after)}, the released version is ${released}: the release writes it (pnpm release); set it back to ${released} and add a changeset instead\n`);
  }
}

const packages = contractPackages(join(changesetDir, 'config.json'));
const pending = pendingBump(readChangesets(changesetDir), packages);
const next = bumpVersion(released, pending);
if (BUMPS.indexOf(pending) < BUMPS.indexOf(required)) {
  failed = true;
  process.stdout.write(
    `✗ the changes since ${released} need a ${required} version, the pending changesets ask for ${pending === 'none' ? 'no release' : `a ${pending} one`}: ` +
      `add a changeset (pnpm changeset) with a ${required} bump for ${packages.join(' and ')}, or undo the changes\n`,
  );
} else if (required !== 'none' || pending !== 'none') {
  process.stdout.write(`✓ the changes since ${released} need ${required === 'none' ? 'no' : `a ${required}`} version; the pending changesets release ${next} (${pending})\n`);
}
process.exitCode = failed ? 1 : 0;

/** Rows of `classification | where | what | rule`, cells cut to a readable width. */
function table(changes: readonly Change[]): string {
  const cut = (text: string, width: number): string => {
    const line = text.replaceAll(/\s+/g, ' ');
    return line.length > width ? `${line.slice(0, width - 1)}…` : line;
  };
  const rows = [['classification', 'where', 'what', 'rule'], ...changes.map((c) => [c.kind, cut(c.where, 70), cut(c.what, 70), c.rule])];
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => `  ${row.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell)).join(' | ')}\n`).join('');
}
