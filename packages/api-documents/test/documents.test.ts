// The built package: what `pnpm pack` ships, and that its YAML and JSON are one document whose
// version is the package's. (Installing it from a registry: the release's integration test in
// packages/contract-tests.)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = join(import.meta.dirname, '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const scratch = mkdtempSync(join(tmpdir(), 'api-documents-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// Packed from the dist/ turbo built (the `build` task), without prepack's rebuild: the release's
// integration test may be publishing the same dist/ meanwhile.
execFileSync('pnpm', ['pack', '--pack-destination', scratch, '--config.ignore-scripts=true'], { cwd: root, stdio: 'ignore' });
const tarball = join(scratch, `catalog-api-documents-${version}.tgz`);
const tar = (...args: string[]): string => execFileSync('tar', [...args, '-f', tarball], { encoding: 'utf8' });

describe('@catalog/api-documents', () => {
  it('ships the four documents, the README, the changelog, the licence and a manifest with no dependencies', () => {
    // CHANGELOG.md exists once a release has written it (pnpm release).
    expect(tar('-tz').trim().split('\n').filter((file) => file !== 'package/CHANGELOG.md').sort()).toEqual([
      'package/LICENSE',
      'package/README.md',
      'package/dist/asyncapi.json',
      'package/dist/asyncapi.yaml',
      'package/dist/openapi.json',
      'package/dist/openapi.yaml',
      'package/package.json',
    ]);
    const manifest = JSON.parse(tar('-xzO', 'package/package.json')) as Record<string, unknown>;
    expect(manifest['dependencies']).toBeUndefined();
    expect(JSON.stringify(manifest)).not.toContain('workspace:');
  });

  it.each(['openapi', 'asyncapi'])('ships %s as JSON and YAML of the same document, at the package version', (name) => {
    const json = JSON.parse(tar('-xzO', `package/dist/${name}.json`)) as { info: { version: string } };
    expect(parse(tar('-xzO', `package/dist/${name}.yaml`))).toEqual(json);
    expect(json.info.version).toBe(version);
  });
});
