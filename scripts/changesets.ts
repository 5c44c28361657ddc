// The pending changesets (.changeset/*.md) and what they ask of the contract's packages, read the way
// `changeset version` reads them: the packages in `config.json`'s fixed group are released together,
// at the largest bump any pending changeset gives one of them. Used by `pnpm check:breaking` (is
// the bump enough for the contract's changes?) and `pnpm release` (what is released, and its text).
import { parseChangesetFile } from '@changesets/parse';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..');
/** The package of the bundled documents: its version is the contract's `info.version`. */
export const DOCUMENTS_PACKAGE = '@catalog/api-documents';
export const DOCUMENTS_DIR = join(ROOT, 'packages/api-documents');

export const BUMPS = ['none', 'patch', 'minor', 'major'] as const;
export type Bump = (typeof BUMPS)[number];

export interface PendingChangeset {
  /** The file name without `.md`, as changesets names it. */
  id: string;
  summary: string;
  releases: { name: string; type: Bump }[];
}

export const larger = (a: Bump, b: Bump): Bump => (BUMPS.indexOf(a) >= BUMPS.indexOf(b) ? a : b);

export function readChangesets(dir: string): PendingChangeset[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.md') && name !== 'README.md')
    .sort()
    .map((name) => ({ id: name.slice(0, -'.md'.length), ...parseChangesetFile(readFileSync(join(dir, name), 'utf8')) }));
}

/** The packages released with the documents (its fixed group, or the documents alone). */
export function contractPackages(configFile: string): string[] {
  if (!existsSync(configFile)) return [DOCUMENTS_PACKAGE];
  const { fixed = [] } = JSON.parse(readFileSync(configFile, 'utf8')) as { fixed?: string[][] };
  return fixed.find((group) => group.includes(DOCUMENTS_PACKAGE)) ?? [DOCUMENTS_PACKAGE];
}

/** The bump the documents' next release gets from `changesets`. */
export function pendingBump(changesets: readonly PendingChangeset[], packages: readonly string[]): Bump {
  return changesets.flatMap((changeset) => changeset.releases).filter((release) => packages.includes(release.name)).reduce<Bump>((bump, release) => larger(bump, release.type), 'none');
}

export function bumpVersion(version: string, bump: Bump): string {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map(Number);
  switch (bump) {
    case 'major': return `${major + 1}.0.0`;
    case 'minor': return `${major}.${minor + 1}.0`;
    case 'patch': return `${major}.${minor}.${patch + 1}`;
    case 'none': return version;
  }
}

export const documentsVersion = (): string => (JSON.parse(readFileSync(join(DOCUMENTS_DIR, 'package.json'), 'utf8')) as { version: string }).version;
