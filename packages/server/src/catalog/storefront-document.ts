// What both storage engines store for a storefront product, defined once: the document layout,
// the cursor arithmetic and the timestamps the storefront index compares.
import type { StorefrontProduct, StorefrontProductInput } from './model.ts';

/**
 * Storefront cursors are CURSOR_BASE + n × CURSOR_STEP for n = 1, 2, …: multiples of 1024 below
 * 2^63, so every one is exact as a double and JSON.parse reads it without loss (n below ~990
 * billion).
 */
export const CURSOR_BASE = 17_000_000_000_000_000n;
export const CURSOR_STEP = 1024n;

/** The n-th cursor (n from 1), for an engine that numbers products with a sequence. */
export function cursorAt(n: bigint): bigint {
  return CURSOR_BASE + n * CURSOR_STEP;
}

/** The cursor after `last` (the largest one stored, or CURSOR_BASE when there is none). */
export function cursorAfter(last: bigint): bigint {
  return last - (last % CURSOR_STEP) + CURSOR_STEP;
}

/** Epoch milliseconds of an ISO 8601 timestamp, as the index and the filter compiler compare them; 0 if unreadable. */
export function epochMs(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? 0 : ms;
}

/**
 * The stored document: the input's fields in their order, with `created_at`, `updated_at` and
 * `cursor` placed where the contract lists them (before `variants`) when the input lacks them;
 * the service's cursor replaces any imported one.
 */
export function storefrontDocument(input: StorefrontProductInput, cursor: number, createdAt: string, updatedAt: string): StorefrontProduct {
  const service: Record<string, unknown> = { created_at: createdAt, updated_at: updatedAt, cursor };
  const output: Record<string, unknown> = {};
  const place = (): void => {
    for (const [key, value] of Object.entries(service)) if (!(key in output)) output[key] = value;
  };
  for (const [key, value] of Object.entries(input)) {
    if (key === 'variants') place();
    if (key === 'cursor') output['cursor'] = cursor;
    else output[key] = key in service ? (service[key] ?? value) : value;
  }
  place();
  return output as StorefrontProduct;
}
