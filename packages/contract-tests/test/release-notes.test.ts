// What `pnpm release` writes besides the changesets' output (scripts/release-notes.ts): the version
// into each document's info block only, and the release's section of the root CHANGELOG.md.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changelogWithRelease, withInfoVersion } from '../../../scripts/release-notes.ts';
import { REPO_ROOT } from './support/spec.ts';

const CHANGELOG = `# Changelog

Intro.

## [Unreleased]

### Server
- A server change.

## [1.0.0] - 2026-11-24

### Contract
- The first release.
`;

const notes = {
  version: '1.1.0',
  date: '2026-12-07',
  packages: ['@catalog/api-documents', '@catalog/client'],
  changesets: [
    { id: 'added-field', summary: 'Brands carry `logo_url`.\n\n- Optional; absent when unknown.', releases: [{ name: '@catalog/api-documents', type: 'minor' as const }, { name: '@catalog/client', type: 'minor' as const }] },
    { id: 'client-fix', summary: 'The stream resumes after a proxy timeout.', releases: [{ name: '@catalog/client', type: 'patch' as const }] },
  ],
};

describe('withInfoVersion', () => {
  it.each(['openapi', 'asyncapi'])('changes the %s document\'s info.version and no other line', (name) => {
    const yaml = readFileSync(join(REPO_ROOT, `specs/${name}/${name}.yaml`), 'utf8');
    const written = withInfoVersion(yaml, '7.8.9');
    // Under the top-level info: block, past its other two-space keys.
    expect(written).toMatch(/^info:\n(?: {2}.*\n)*? {2}version: 7\.8\.9$/m);
    const changed = written.split('\n').filter((line, index) => line !== yaml.split('\n')[index]);
    expect(changed).toEqual(['  version: 7.8.9']);
  });

  it('refuses a document whose info block has no version, rather than writing another block\'s', () => {
    expect(() => withInfoVersion('openapi: 3.1.0\ninfo:\n  title: T\nservers:\n  version: 1\n', '2.0.0')).toThrow('info: has no version');
  });
});

describe('changelogWithRelease', () => {
  it('writes the release under an emptied [Unreleased]: each changeset with its packages, then the hand-written entries', () => {
    const { text, section } = changelogWithRelease(CHANGELOG, notes);
    expect(section).toBe(`## [1.1.0] - 2026-12-07

### \`@catalog/api-documents\`, \`@catalog/client\`
- \`@catalog/api-documents\` minor, \`@catalog/client\` minor: Brands carry \`logo_url\`.

  - Optional; absent when unknown.
- \`@catalog/client\` patch: The stream resumes after a proxy timeout.

### Server
- A server change.
`);
    expect(text).toBe(`# Changelog

Intro.

## [Unreleased]

${section}
## [1.0.0] - 2026-11-24

### Contract
- The first release.
`);
  });
});
