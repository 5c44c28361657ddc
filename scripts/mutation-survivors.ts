// `node scripts/mutation-survivors.ts <target>…`: the surviving and uncovered mutants of a target's
// last run (`reports/mutation/<target>.json` in its package, written by `pnpm test:mutation`), one
// table row each, in packages/server/docs/mutation-survivors/<target>.md, keeping the verdict and
// reason already written there for the same mutant. A mutant is the same when its file, mutator,
// replacement and source line are (and, for a line written twice in a file, its place among them):
// a move to another line keeps its reason, an edit of the line asks for a new one. A survivor without a reason is written as "not reviewed"; the script prints
// how many there are and exits 1 when any is left, so a run's review can be checked.
//
// The verdicts: `equivalent` (no observable result can change; the reason says why) and
// `not killed` (observable, but not tested; the reason says why). A mutant killed by a new test
// drops out of the list at the next run.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TARGETS } from './mutation-targets.ts';

interface Mutant {
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: { line: number; column: number } };
}
interface Report {
  files: Record<string, { source: string; mutants: Mutant[] }>;
}
/** A row of the list, each field a table cell. */
interface Row {
  where: string;
  mutator: string;
  replacement: string;
  code: string;
  status: string;
  verdict: string;
  reason: string;
}

const root = join(import.meta.dirname, '..');
const outDir = join(root, 'packages/server/docs/mutation-survivors');
const COLUMNS = ['where', 'status', 'mutator', 'replacement', 'code', 'verdict', 'reason'] as const;

/** A table cell: one line, `|` escaped, code in backticks where it has any. */
function cell(text: string, code = false): string {
  const flat = text.replace(/\s+/gu, ' ').trim().replaceAll('|', '\\|');
  return code && flat !== '' ? `\`${flat.replaceAll('`', "'")}\`` : flat;
}

/** The cells of a table row as written (escaped), so they can be compared with and written as cells. */
function cells(line: string): string[] {
  return line.trim().replace(/^\|/u, '').replace(/\|$/u, '').split(/(?<!\\)\|/u).map((part) => part.trim());
}

/**
 * Mutants' identities, from cells: file, mutator, replacement and source line, and which of the
 * mutants with those four it is, in line order (one line of code written twice in a file, such as
 * `connection.abort();`, is two mutants with a verdict each).
 */
function identities(): (file: string, mutator: string, replacement: string, code: string) => string {
  const seen = new Map<string, number>();
  return (...parts) => {
    const key = parts.join('\u0000');
    const nth = seen.get(key) ?? 0;
    seen.set(key, nth + 1);
    return `${key}\u0000${nth}`;
  };
}

/** The verdicts and reasons (as cells) written in an earlier list, by mutant. */
function readReviews(path: string): Map<string, { verdict: string; reason: string }> {
  const reviews = new Map<string, { verdict: string; reason: string }>();
  if (!existsSync(path)) return reviews;
  const keyOf = identities();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.startsWith('| ') || line.startsWith('| where') || line.startsWith('| ---')) continue;
    const [where, , mutator, replacement, code, verdict, reason] = cells(line);
    if (where === undefined || verdict === undefined || verdict === 'not reviewed') continue;
    reviews.set(keyOf(where.replace(/:\d+:\d+$/u, ''), mutator ?? '', replacement ?? '', code ?? ''), { verdict, reason: reason ?? '' });
  }
  return reviews;
}

let unreviewed = 0;
const names = process.argv.slice(2).filter((arg) => arg !== '--');
if (names.length === 0) {
  process.stderr.write(`usage: node scripts/mutation-survivors.ts <target>… (${Object.keys(TARGETS).join(', ')})\n`);
  process.exit(2);
}
for (const name of names) {
  const target = TARGETS[name];
  if (target === undefined) {
    process.stderr.write(`unknown target ${name}; known: ${Object.keys(TARGETS).join(', ')}\n`);
    process.exit(2);
  }
  const reportPath = join(root, target.packageDir, 'reports/mutation', `${name}.json`);
  if (!existsSync(reportPath)) {
    process.stderr.write(`${reportPath} is missing: run pnpm test:mutation -- ${name} first\n`);
    process.exit(2);
  }
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
  const outPath = join(outDir, `${name}.md`);
  const reviews = readReviews(outPath);
  const rows: Row[] = [];
  const keyOf = identities();
  for (const [file, { source, mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
    const lines = source.split('\n');
    const left = mutants
      .filter((mutant) => mutant.status === 'Survived' || mutant.status === 'NoCoverage')
      .sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column);
    for (const mutant of left) {
      const { line, column } = mutant.location.start;
      const where = `${file}:${line}:${column}`;
      const mutator = cell(mutant.mutatorName);
      const replacement = cell(mutant.replacement ?? '', true);
      const code = cell(lines[line - 1] ?? '', true);
      const review = reviews.get(keyOf(cell(file), mutator, replacement, code));
      if (review === undefined) unreviewed += 1;
      rows.push({ where: cell(where), status: mutant.status === 'Survived' ? 'survived' : 'no coverage', mutator, replacement, code, verdict: review?.verdict ?? 'not reviewed', reason: review?.reason ?? '' });
    }
  }
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.verdict, (counts.get(row.verdict) ?? 0) + 1);
  const out = [
    `# Surviving mutants: \`${name}\``,
    '',
    `The mutants of \`${target.mutate.join('`, `')}\` that no test of the target killed in its last run,`,
    `each with its verdict. Made by \`node scripts/mutation-survivors.ts ${name}\` from the run's`,
    `\`reports/mutation/${name}.json\`; the verdicts and reasons are written here by hand and kept from one`,
    'run to the next for the same mutant (file, mutator, replacement and source line). See',
    '[`../mutation-testing.md`](../mutation-testing.md) for the scores and how to run.',
    '',
    `${rows.length} mutants: ${[...counts].map(([verdict, count]) => `${count} ${verdict}`).join(', ') || 'none'}.`,
    '',
    `| ${COLUMNS.join(' | ')} |`,
    `| ${COLUMNS.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${COLUMNS.map((column) => row[column]).join(' | ')} |`),
    '',
  ];
  mkdirSync(outDir, { recursive: true });
  writeFileSync(outPath, out.join('\n'));
  process.stdout.write(`${name}: ${rows.length} mutants left, ${rows.length - rows.filter((row) => row.verdict === 'not reviewed').length} with a verdict -> ${outPath}\n`);
}
if (unreviewed > 0) {
  process.stdout.write(`${unreviewed} mutants have no verdict yet: write one in the list (equivalent or not killed, with the reason) or kill them with a test\n`);
  process.exit(1);
}
