import { describe, expect, it } from 'vitest';
import { CURSOR_BASE, CURSOR_STEP, cursorAfter, cursorAt, storefrontDocument } from '../../src/catalog/storefront-document.ts';
import { buildStorefrontProductInput } from '@catalog/contract/testing';

describe('storefront cursors', () => {
  it('numbers the n-th product CURSOR_BASE + n steps, and follows any stored cursor with the next step', () => {
    expect(cursorAt(1n)).toBe(CURSOR_BASE + CURSOR_STEP);
    expect(cursorAt(3n)).toBe(CURSOR_BASE + 3n * CURSOR_STEP);
    expect(cursorAfter(CURSOR_BASE)).toBe(CURSOR_BASE + CURSOR_STEP);
    expect(cursorAfter(cursorAt(7n))).toBe(cursorAt(8n));
    // A cursor between steps (none the service makes) is followed by the next whole step.
    expect(cursorAfter(cursorAt(7n) + 5n)).toBe(cursorAt(8n));
  });
});

describe('storefrontDocument', () => {
  it('keeps the input\'s fields in order and places created_at, updated_at and cursor before variants', () => {
    const input = buildStorefrontProductInput();
    const document = storefrontDocument(input, 42, '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z');
    const inputKeys = Object.keys(input).filter((key) => key !== 'created_at' && key !== 'updated_at' && key !== 'cursor');
    const at = inputKeys.indexOf('variants');
    expect(Object.keys(document)).toEqual([...inputKeys.slice(0, at), 'created_at', 'updated_at', 'cursor', ...inputKeys.slice(at)]);
    expect(document).toMatchObject({ created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-02T00:00:00Z', cursor: 42, variants: input.variants });
  });

  it('replaces an imported cursor and timestamps with the service\'s, where the input put them', () => {
    const { variants, ...rest } = buildStorefrontProductInput();
    const input = { cursor: 7, ...rest, created_at: '2020-01-01T00:00:00Z', variants };
    const document = storefrontDocument(input, 42, '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z');
    expect(Object.keys(document)[0]).toBe('cursor');
    expect(document).toMatchObject({ cursor: 42, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-02T00:00:00Z' });
    expect(Object.keys(document).indexOf('updated_at')).toBeLessThan(Object.keys(document).indexOf('variants'));
  });

  it('keeps a field the contract does not list, whatever its name, with its value', () => {
    const { variants, ...rest } = buildStorefrontProductInput();
    const input = { ...rest, '': 'blank', extra: 1, variants };
    const document = storefrontDocument(input, 42, 'c', 'u') as Record<string, unknown>;
    expect(document).toMatchObject({ '': 'blank', extra: 1, cursor: 42 });
  });

  it('places the service fields last when the input has no variants', () => {
    const { variants: _variants, ...input } = buildStorefrontProductInput();
    const document = storefrontDocument(input as Parameters<typeof storefrontDocument>[0], 42, 'c', 'u');
    expect(Object.keys(document).slice(-3)).toEqual(['created_at', 'updated_at', 'cursor']);
  });
});
