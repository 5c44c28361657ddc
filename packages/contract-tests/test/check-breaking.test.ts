// `pnpm check:breaking` as a spec author meets it: the released contract changed three ways (an
// optional field added, an operation removed, a description edited) and checked with and without
// a pending changeset of each bump. A breaking change cannot be released without a major version;
// an added optional field can be released as a minor one; every change is listed with its
// classification and the rule that classified it.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/spec.ts';
import { workspace } from './support/server.ts';

const run = promisify(execFile);
const ws = workspace('check-breaking');
afterAll(() => ws.dispose());

interface Json {
  info: { version: string; description: string };
  paths: Record<string, unknown>;
  channels: Record<string, unknown>;
  components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> };
}
type Bump = 'major' | 'minor' | 'patch';
const released = (name: string): Json => JSON.parse(readFileSync(join(REPO_ROOT, 'specs/released', name), 'utf8')) as Json;
const releasedVersion = released('openapi.json').info.version;
const [major = 0, minor = 0] = releasedVersion.split('.').map(Number);

/**
 * Writes the released documents changed by `change` and, when `bump` is given, a changeset of that
 * bump for the documents package (with the repository's changeset config, so its fixed group), then
 * runs the check on them.
 */
async function check(name: string, bump: Bump | undefined, change: (openapi: Json, asyncapi: Json) => void): Promise<{ code: number; output: string }> {
  const dir = join(ws.dir, name);
  const changesets = join(dir, '.changeset');
  mkdirSync(changesets, { recursive: true });
  const [openapi, asyncapi] = [released('openapi.json'), released('asyncapi.json')];
  change(openapi, asyncapi);
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(openapi));
  writeFileSync(join(dir, 'asyncapi.json'), JSON.stringify(asyncapi));
  copyFileSync(join(REPO_ROOT, '.changeset/config.json'), join(changesets, 'config.json'));
  if (bump !== undefined) writeFileSync(join(changesets, `${name}.md`), `---\n"@catalog/api-documents": ${bump}\n---\n\nThe ${name} change.\n`);
  try {
    const { stdout } = await run(process.execPath, [join(REPO_ROOT, 'scripts/check-breaking.ts'), '--current', dir, '--changesets', changesets]);
    return { code: 0, output: stdout };
  } catch (error) {
    const failure = error as { code: number; stdout: string };
    return { code: failure.code, output: failure.stdout };
  }
}

const addOptionalField = (openapi: Json): void => {
  openapi.components.schemas['BrandCount']!.properties['logo_url'] = { type: 'string', format: 'iri' };
};
const removeOperation = (openapi: Json): void => {
  delete openapi.paths['/v2/brands'];
};

// Each check is a process that loads both diff tools (about a second, far more on a loaded
// machine): the checks of one test run at once, and a test may take longer than the default.
describe('pnpm check:breaking', { timeout: 120_000 }, () => {
  it('passes on the released contract with no changeset, and on specs/ with the pending changesets', async () => {
    const [unchanged, { stdout }] = await Promise.all([check('unchanged', undefined, () => {}), run(process.execPath, [join(REPO_ROOT, 'scripts/check-breaking.ts')])]);
    expect(unchanged.code).toBe(0);
    expect(unchanged.output).toContain(`openapi.json: 0 change(s) since the released contract (version ${releasedVersion})`);
    expect(stdout).toContain('openapi.json');
  });

  it('releases an added optional field as a minor version, not as a patch or without a changeset', async () => {
    const [none, patchRelease, minorRelease] = await Promise.all([
      check('added-none', undefined, addOptionalField),
      check('added-patch', 'patch', addOptionalField),
      check('added-minor', 'minor', addOptionalField),
    ]);
    expect(none.code).toBe(1);
    expect(none.output).toMatch(/non-breaking\s+\| components\/schemas\/BrandCount\/properties\/logo_url\s+\|/);
    expect(none.output).toContain(`the changes since ${releasedVersion} need a minor version, the pending changesets ask for no release`);
    expect(patchRelease.code).toBe(1);
    expect(minorRelease.code).toBe(0);
    expect(minorRelease.output).toContain(`the pending changesets release ${major}.${minor + 1}.0 (minor)`);
  });

  it('fails on an operation removed, naming it, until a major changeset is pending', async () => {
    const [minorRelease, majorRelease] = await Promise.all([
      check('removed-minor', 'minor', (openapi) => {
        removeOperation(openapi);
        addOptionalField(openapi);
      }),
      check('removed-major', 'major', removeOperation),
    ]);
    expect(minorRelease.code).toBe(1);
    expect(minorRelease.output).toMatch(/breaking\s+\| paths\/\/v2\/brands\/get\s+\|/);
    expect(minorRelease.output).toContain('api-smart-diff: remove at paths/{path}/get (a removed operation fails every caller)');
    expect(minorRelease.output).toContain('need a major version, the pending changesets ask for a minor one: add a changeset (pnpm changeset) with a major bump for @catalog/api-documents and @catalog/client');
    expect(majorRelease.code).toBe(0);
    expect(majorRelease.output).toContain(`the pending changesets release ${major + 1}.0.0 (major)`);
  });

  it('fails when info.version is raised by hand: the release writes it', async () => {
    const raised = await check('raised', 'major', (openapi) => {
      removeOperation(openapi);
      openapi.info.version = `${major + 1}.0.0`;
    });
    expect(raised.code).toBe(1);
    expect(raised.output).toContain(`info.version is ${major + 1}.0.0, the released version is ${releasedVersion}`);
  });

  it('needs a patch for a description edited, which breaks nothing', async () => {
    const change = (openapi: Json): void => {
      openapi.info.description += '\nOne more line.';
    };
    const [none, patchRelease] = await Promise.all([check('annotation-none', undefined, change), check('annotation-patch', 'patch', change)]);
    expect(none.code).toBe(1);
    // Every change is a row: classification, where, what, and the rule that classified it.
    expect(none.output).toMatch(/annotation\s+\| info\/description\s+\| .+ \| api-smart-diff: replace at info\/description/);
    expect(patchRelease.code).toBe(0);
  });

  it('fails on a stream channel removed from the AsyncAPI document without a major changeset', async () => {
    const result = await check('channel', 'minor', (_openapi, asyncapi) => {
      delete asyncapi.channels['prices'];
    });
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/asyncapi\.json[\s\S]*breaking\s+\| channels\/prices\s+\|.*@asyncapi\/diff standard: remove at channels\/\{channel\} \(a removed channel fails every subscriber\)/);
  });
});
