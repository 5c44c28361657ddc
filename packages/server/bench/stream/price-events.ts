// Price events whose `timestamp` carries the publish instant (wall clock, nanosecond field), so a
// subscriber in another process computes publish-to-receive latency from the payload alone.
import type { PriceEvent } from '@catalog/contract';
import { buildPriceEvent } from '@catalog/contract/testing';

export const BENCH_TOPIC = 'price:marketplacea:us';

/** Milliseconds since the epoch with sub-millisecond precision, comparable across processes. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}

export function encodeTimestamp(ms: number): string {
  const whole = Math.floor(ms);
  const nanos = Math.round((ms - whole) * 1e6) + (whole % 1000) * 1e6;
  return `${new Date(whole).toISOString().slice(0, 19)}.${String(Math.min(nanos, 999_999_999)).padStart(9, '0')}Z`;
}

/**
 * Inverse of encodeTimestamp on the 30 characters of an ISO nanosecond timestamp, read from raw
 * bytes (latin1) so the subscriber never decodes or parses the whole payload.
 */
export function decodeTimestamp(text: string): number {
  return Date.parse(`${text.slice(0, 19)}Z`) + Number(text.slice(20, 29)) / 1e6;
}

export function benchPriceEvent(sequence: number, publishedAtMs: number): PriceEvent {
  const n = String(sequence).padStart(12, '0');
  return buildPriceEvent({
    product_id: `00000000-0000-4000-8000-${n}`,
    variant_id: `00000000-0000-4000-9000-${n}`,
    size: String(7 + (sequence % 14) / 2),
    price: 100 + (sequence % 10_000) / 100,
    sku: `BN${String(sequence % 100_000).padStart(5, '0')}-100`,
    timestamp: encodeTimestamp(publishedAtMs),
  });
}
