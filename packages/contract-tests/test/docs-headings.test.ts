// What the docs renderers show as plain text (issue 29 items 5 and 6). Redoc and the AsyncAPI
// component put every Markdown heading of a description into their sidebars as text, so inline
// markup in a heading (`code`, *emphasis*, <tags>, [links]) shows there raw, as `<code>filters</code>`
// did. And the documents' licence is the repository's LICENSE, stated once.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { asyncapi, openapi, REPO_ROOT } from './support/spec.ts';

/** Every string under a `description` key, anywhere in the document. */
function descriptions(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(descriptions);
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) => (key === 'description' && typeof value === 'string' ? [value] : descriptions(value)));
}

const headings = (document: unknown): string[] =>
  descriptions(document).flatMap((text) => text.split('\n').filter((line) => /^#{1,6} /.test(line)));

describe('the documents as the docs pages show them', () => {
  it.each([
    ['openapi', openapi],
    ['asyncapi', asyncapi],
  ])('has no inline markup in a heading of the %s document', (_name, document) => {
    const found = headings(document);
    expect(found.length).toBeGreaterThan(0);
    expect(found.filter((heading) => /[`*_<>[\]]/.test(heading))).toEqual([]);
  });

  it('states the licence of LICENSE (MIT) in the OpenAPI document', () => {
    expect(readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    expect((openapi['info'] as { license?: unknown }).license).toEqual({ name: 'MIT', identifier: 'MIT' });
  });
});
