// `pnpm test:mutation [target…]`: Stryker's mutation testing of the code whose tests must be strong,
// one target at a time (default: all, in the order below; the targets: scripts/mutation-targets.ts).
// Not part of `pnpm test`: from scratch a target takes from minutes (stream, client, contract) to
// about an hour (catalog, http) on two cores; with the committed results (below), minutes.
// Each target writes reports/mutation/<target>.html and .json (<target>-<file>… for a run in parts)
// beside its package and prints its score; `node scripts/mutation-survivors.ts <target>` then lists
// its surviving mutants with their verdicts (packages/server/docs/mutation-survivors/), and the
// scores are in packages/server/docs/mutation-testing.md.
//
//   pnpm test:mutation -- stream catalog     the targets, by name
//   MUTATION_CONCURRENCY=1                   test runners in parallel (default 2)
//   MUTATION_EXCLUDE=src/catalog/seed/**,…         files left out of the run
//   MUTATION_ONLY=src/stream/hub.ts,…         only these files of the target (a run in parts)
//   MUTATION_TEST_FILES=test/stream/hub.test.ts   only these test files (a quicker run; its score is a
//                                            lower bound of the target's: fewer tests can kill fewer mutants)
//   FC_RUNS=25                               fast-check cases per property (default 25 here)
//   MUTATION_FORCE=1                         test every mutant, ignoring the stored results (below)
//
// Incremental: each run keeps its results in <package>/mutation/<run>.incremental.json (committed for
// the whole targets). The next run re-tests only the mutants whose code or covering tests changed
// since, and takes the stored result for the rest; MUTATION_FORCE=1 re-tests everything and
// rewrites the file. A stored result is trusted only as far as Stryker's diff of source and test
// files: a change elsewhere that alters behaviour (a dependency, another package) is not seen.
// A run stopped with Ctrl-C or SIGTERM writes the results it has so far to that file, so a target
// too long for one sitting (http from scratch, catalog after many test changes) is run in several: the next run
// tests only the mutants still without a result.
//
// Stryker works in a copy of the package (.stryker-tmp-<target>/, removed afterwards), so the tree can be
// edited while it runs. Tests run by vitest-runner with per-test coverage: each mutant runs only the
// tests that reached it; the vitest config names which test files take part.
import { Stryker } from '@stryker-mutator/core';
import type { PartialStrykerOptions } from '@stryker-mutator/api/core';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { TARGETS, type Target } from './mutation-targets.ts';

const root = join(import.meta.dirname, '..');

const requested = process.argv.slice(2).filter((arg) => arg !== '--');
const unknown = requested.filter((name) => !(name in TARGETS));
if (unknown.length > 0) {
  process.stderr.write(`unknown target(s) ${unknown.join(', ')}; known: ${Object.keys(TARGETS).join(', ')}\n`);
  process.exit(2);
}
const names = requested.length > 0 ? requested : Object.keys(TARGETS);
const concurrency = Number(process.env['MUTATION_CONCURRENCY'] ?? 2);
const excluded = (process.env['MUTATION_EXCLUDE'] ?? '').split(',').filter((path) => path !== '');
const only = (process.env['MUTATION_ONLY'] ?? '').split(',').filter((path) => path !== '');
const force = process.env['MUTATION_FORCE'] === '1';
const testFiles = (process.env['MUTATION_TEST_FILES'] ?? '').split(',').filter((path) => path !== '');
// Stryker finds plugins next to itself; under pnpm the runner is not there, so it is named by path.
const vitestRunner = createRequire(join(root, 'package.json')).resolve('@stryker-mutator/vitest-runner');
// Fast-check cases per property: every mutant a property reaches re-runs it.
process.env['FC_RUNS'] ??= '25';
// Stryker's runner runs the tests in worker threads, where a test's own `process.env.TZ = …` does
// not move the zone, so a test that proves an answer does not depend on the server's zone would
// run in this machine's zone (UTC) only. The runs are made in a zone with a half-hour offset
// instead, the same on every machine.
process.env['TZ'] = 'America/St_Johns';

// What the targets' tests read and `pnpm test` makes before them (turbo's test task depends on
// ^build and ^bundle): the bundled specs and the built packages, e.g. the client's tests against
// the stream mock. A few seconds when they are built already. Turbo looks for pnpm, so this script
// is run as `pnpm test:mutation`.
const packageNames = [...new Set(names.map((name) => (TARGETS[name] as Target).packageDir))].map(
  (dir) => (JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as { name: string }).name,
);
execFileSync(join(root, 'node_modules/.bin/turbo'), ['run', 'build', 'bundle', '--output-logs=errors-only', ...packageNames.map((name) => `--filter=${name}...`)], { cwd: root, stdio: 'inherit' });

let failed = false;
for (const name of names) {
  const target = TARGETS[name] as Target;
  const cwd = join(root, target.packageDir);
  process.chdir(cwd);
  const tests = testFiles.length > 0 ? testFiles : target.tests;
  if (tests === undefined) delete process.env['MUTATION_TESTS'];
  else process.env['MUTATION_TESTS'] = tests.join(',');
  // A run in parts has a sandbox and reports of its own, so parts may run side by side.
  const runName = only.length === 0 ? name : `${name}-${only.map((path) => basename(path, '.ts')).join('-')}`;
  const options: PartialStrykerOptions = {
    testRunner: 'vitest',
    plugins: [vitestRunner],
    vitest: { configFile: target.vitestConfig, related: false },
    coverageAnalysis: 'perTest',
    mutate: [...(only.length > 0 ? only : target.mutate), ...excluded.map((path) => `!${path}`)],
    concurrency,
    // Static mutants (module-level constants) would need every test re-run per mutant; they are
    // counted as "ignored" instead, and listed in the report.
    ignoreStatic: true,
    timeoutMS: 15_000,
    tempDirName: `.stryker-tmp-${runName}`,
    incremental: true,
    incrementalFile: `mutation/${runName}${testFiles.length > 0 ? '-selected-tests' : ''}.incremental.json`,
    force,
    // Another target's sandbox (a run beside this one) and reports are not part of the package.
    ignorePatterns: ['/.stryker-tmp-*', '/reports', '/.pack', '/mutation'],
    reporters: ['clear-text', 'progress', 'html', 'json'],
    htmlReporter: { fileName: `reports/mutation/${runName}.html` },
    jsonReporter: { fileName: `reports/mutation/${runName}.json` },
    clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
    thresholds: { high: 90, low: target.breakAt, break: null },
  };
  process.stdout.write(`\n== mutation testing: ${name} (${target.mutate.join(', ')}${excluded.length > 0 ? `; without ${excluded.join(', ')}` : ''}) ==\n`);
  const results = await new Stryker(options).runMutationTest();
  const counts = { killed: 0, survived: 0, timeout: 0, noCoverage: 0, other: 0 };
  for (const result of results) {
    if (result.status === 'Killed') counts.killed += 1;
    else if (result.status === 'Survived') counts.survived += 1;
    else if (result.status === 'Timeout') counts.timeout += 1;
    else if (result.status === 'NoCoverage') counts.noCoverage += 1;
    else counts.other += 1;
  }
  const detected = counts.killed + counts.timeout;
  const valid = detected + counts.survived + counts.noCoverage;
  const score = valid === 0 ? 100 : (100 * detected) / valid;
  process.stdout.write(`${name}: ${score.toFixed(1)}% killed (${counts.killed} killed, ${counts.timeout} timed out, ${counts.survived} survived, ${counts.noCoverage} not covered, ${counts.other} ignored or in error); goal ${target.breakAt}%\n`);
  if (score < target.breakAt) failed = true;
}
process.exit(failed ? 1 : 0);
