// `pnpm release`: the one command a maintainer runs to release the contract's packages
// (@catalog/client and @catalog/api-documents, one shared version), from a clean checkout of main
// with a registry login (`npm login`, or a token in .npmrc):
//
//   1. `pnpm check:breaking` must pass: the pending changesets ask for the bump the contract needs;
//   2. `changeset version` consumes the changesets: the packages' versions and CHANGELOG.md files;
//   3. the new version becomes the documents' `info.version`; the bundle is regenerated, copied to
//      specs/released/ (the next check's baseline), and `pnpm generate` refreshes @catalog/contract;
//   4. the root CHANGELOG.md gets the release's section: the changesets' text, then what was under
//      [Unreleased] (the service's own changes);
//   5. both packages are built, the release is committed and tagged (`changeset tag`), and
//   6. published with `pnpm publish`.
//
// `pnpm release --dry-run` changes nothing: it runs the check, prints the version, the packages'
// plan (`changeset status`) and the CHANGELOG.md section it would write, builds, and runs
// `pnpm publish --dry-run` on what would be packed.
// `node scripts/release.ts publish [--registry URL] [--dry-run]` is step 6 alone, on packages built
// already: what the release's integration test runs against its own registry.
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bumpVersion, contractPackages, documentsVersion, pendingBump, readChangesets, ROOT } from './changesets.ts';
import { changelogWithRelease, withInfoVersion } from './release-notes.ts';

const CHANGESET_DIR = join(ROOT, '.changeset');
const PACKAGES = contractPackages(join(CHANGESET_DIR, 'config.json'));
const DOCUMENTS = ['openapi', 'asyncapi'] as const;

const { values, positionals } = parseArgs({
  options: { 'dry-run': { type: 'boolean', default: false }, registry: { type: 'string' } },
  allowPositionals: true,
});
const dryRun = values['dry-run'];

function run(command: string, args: string[], options: { capture?: boolean } = {}): string {
  process.stdout.write(`$ ${command} ${args.join(' ')}\n`);
  const output = execFileSync(command, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', options.capture === true ? 'pipe' : 'inherit', 'inherit'] });
  return output ?? '';
}
const node = (script: string, args: string[] = []): string => run(process.execPath, [script, ...args]);
const changeset = (args: string[]): string => node(createRequire(import.meta.url).resolve('@changesets/cli/bin.js'), args);

/**
 * `pnpm publish` of the contract's packages, as built (their prepack build is skipped: the release
 * built them, and a test may be reading the same dist/ meanwhile). Versions already in the registry
 * are skipped, so a publish that failed half-way can be run again. Git checks are off because the
 * release checked the tree and made the commit itself.
 */
function publish(options: { registry?: string | undefined; dryRun: boolean }): void {
  const filters = PACKAGES.flatMap((name) => ['--filter', name]);
  const registry = options.registry === undefined ? [] : ['--registry', options.registry];
  run('pnpm', ['publish', '--recursive', ...filters, '--access', 'public', '--no-git-checks', '--ignore-scripts', ...registry, ...(options.dryRun ? ['--dry-run'] : [])]);
}

const build = (): string => run('pnpm', ['exec', 'turbo', 'run', 'build', ...PACKAGES.flatMap((name) => ['--filter', name]), '--output-logs=errors-only']);

function release(): void {
  if (!dryRun && run('git', ['status', '--porcelain'], { capture: true }).trim() !== '') {
    throw new Error('the working tree has changes: commit or stash them, so the release commit holds only the release');
  }
  const changesets = readChangesets(CHANGESET_DIR);
  const bump = pendingBump(changesets, PACKAGES);
  if (bump === 'none') {
    process.stdout.write(`no pending changeset releases ${PACKAGES.join(' or ')}: nothing to release\n`);
    return;
  }
  node(join(ROOT, 'scripts/check-breaking.ts'), ['--breaking-only']);
  const version = bumpVersion(documentsVersion(), bump);
  const changelogFile = join(ROOT, 'CHANGELOG.md');
  const changelog = changelogWithRelease(readFileSync(changelogFile, 'utf8'), { version, date: new Date().toISOString().slice(0, 10), packages: PACKAGES, changesets });
  process.stdout.write(`release ${version} (${bump}) of ${PACKAGES.join(' and ')}\n`);

  if (dryRun) {
    changeset(['status', '--verbose']);
    process.stdout.write(`CHANGELOG.md would get:\n\n${changelog.section}\n`);
    build();
    publish({ registry: values.registry, dryRun: true });
    return;
  }

  changeset(['version']);
  if (documentsVersion() !== version) throw new Error(`changeset version made ${documentsVersion()}, not ${version}`);
  for (const name of DOCUMENTS) {
    const file = join(ROOT, `specs/${name}/${name}.yaml`);
    writeFileSync(file, withInfoVersion(readFileSync(file, 'utf8'), version));
  }
  node(join(ROOT, 'specs/scripts/bundle.ts'));
  for (const name of DOCUMENTS) copyFileSync(join(ROOT, `specs/dist/${name}.json`), join(ROOT, `specs/released/${name}.json`));
  run('pnpm', ['exec', 'turbo', 'run', 'generate', '--output-logs=errors-only']);
  writeFileSync(changelogFile, changelog.text);
  node(join(ROOT, 'scripts/check-breaking.ts'), ['--breaking-only']);
  build();
  run('git', ['add', '--all']);
  run('git', ['commit', '--quiet', '--message', `Release ${version}`]);
  changeset(['git-tag']);
  publish({ registry: values.registry, dryRun: false });
  process.stdout.write(`released ${version}: push the commit and its tags (git push --follow-tags)\n`);
}

if (positionals[0] === 'publish') publish({ registry: values.registry, dryRun });
else if (positionals.length === 0) release();
else throw new Error(`unknown command ${positionals.join(' ')}: node scripts/release.ts [publish] [--dry-run] [--registry URL]`);
