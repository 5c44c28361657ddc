// What the release writes besides the changesets' own output (scripts/release.ts): the version into
// the contract's documents, and the release's section of the root CHANGELOG.md. Pure text in, text
// out, so they are tested without releasing (packages/contract-tests/test/release-notes.test.ts).
import type { PendingChangeset } from './changesets.ts';

/**
 * The YAML document with `version` as its `info.version`: the `  version:` line of the top-level
 * `info:` block is replaced, and nothing else (other `version` keys, comments and layout stay).
 */
export function withInfoVersion(yaml: string, version: string): string {
  const info = /^info:\n/m.exec(yaml);
  if (info === null) throw new Error('no top-level info: block');
  const blockStart = info.index + info[0].length;
  const next = /^\S/m.exec(yaml.slice(blockStart));
  const block = yaml.slice(blockStart, next === null ? undefined : blockStart + next.index);
  const line = /^ {2}version: .*$/m.exec(block);
  if (line === null) throw new Error('info: has no version');
  const at = blockStart + line.index;
  return `${yaml.slice(0, at)}  version: ${version}${yaml.slice(at + line[0].length)}`;
}

export interface ReleaseNotes {
  version: string;
  /** YYYY-MM-DD. */
  date: string;
  /** The packages released together, named in the section's heading. */
  packages: readonly string[];
  changesets: readonly PendingChangeset[];
}

/**
 * The root CHANGELOG.md with the release's section under an emptied `## [Unreleased]`: one entry
 * per changeset (the packages it bumps and how, then its text), then what [Unreleased] held (the
 * service's own changes, written by hand), moved as it was.
 */
export function changelogWithRelease(changelog: string, notes: ReleaseNotes): { text: string; section: string } {
  const heading = '## [Unreleased]\n';
  const start = changelog.indexOf(heading);
  if (start < 0) throw new Error('CHANGELOG.md has no "## [Unreleased]" heading');
  const end = changelog.indexOf('\n## [', start + heading.length);
  const unreleased = changelog.slice(start + heading.length, end < 0 ? undefined : end + 1).trim();
  const entries = notes.changesets.map((changeset) => {
    const [first = '', ...rest] = changeset.summary.trim().split('\n');
    const names = changeset.releases.filter((release) => release.type !== 'none').map((release) => `\`${release.name}\` ${release.type}`);
    return [`- ${names.join(', ')}: ${first}`, ...rest.map((line) => (line === '' ? '' : `  ${line}`))].join('\n');
  });
  const section = [
    `## [${notes.version}] - ${notes.date}`,
    '',
    `### ${notes.packages.map((name) => `\`${name}\``).join(', ')}`,
    ...entries,
    ...(unreleased === '' ? [] : ['', unreleased]),
    '',
  ].join('\n');
  return { text: `${changelog.slice(0, start)}${heading}\n${section}${end < 0 ? '' : `\n${changelog.slice(end + 1)}`}`, section };
}
