import { describe, expect, it } from 'vitest';
import { BatchEncoder } from '../../src/stream/batch-encoder.ts';
import { encodeEvent, encodeReset } from '@catalog/contract/stream';
import type { StoredPriceEvent } from '../../src/prices/price-log.ts';
import type { EventItem, StreamItem } from '../../src/stream/subscription.ts';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function eventItem(id: number, topic: string, data = '{}'): EventItem {
  return { kind: 'event', event: { id, topic, data } };
}

const frameOf = ({ event }: { event: StoredPriceEvent }): string => encodeEvent({ id: event.id, event: event.topic, data: event.data });

describe('BatchEncoder', () => {
  const a1 = eventItem(1, 'a', '{"price":"9 €"}');
  const b2 = eventItem(2, 'b');
  const a3 = eventItem(3, 'a');

  it('encodes a batch as the bytes of its frames, in order, in UTF-8', () => {
    const bytes = new BatchEncoder().encode([a1, b2, a3]);
    expect(bytes.toString('utf8')).toBe(frameOf(a1) + frameOf(b2) + frameOf(a3));
    expect(bytes.byteLength).toBe(Buffer.byteLength(frameOf(a1) + frameOf(b2) + frameOf(a3)));
  });

  it('encodes a reset and the events after it, and an empty batch as nothing', () => {
    const encoder = new BatchEncoder();
    const reset: StreamItem = { kind: 'reset', requestedId: 1200, oldestId: 7001 };
    expect(encoder.encode([reset, a3]).toString()).toBe(encodeReset({ requested_id: 1200, oldest_id: 7001 }) + frameOf(a3));
    expect(encoder.encode([]).byteLength).toBe(0);
  });

  it('encodes an event once, however many batches it is in', () => {
    const encoder = new BatchEncoder();
    expect(encoder.encode([a1])).toBe(encoder.encode([a1]));
  });

  it('returns the same bytes for every subscriber that gets the same run within a turn, and other bytes for a different run', () => {
    const encoder = new BatchEncoder();
    const both1 = encoder.encode([a1, b2, a3]);
    const both2 = encoder.encode([a1, b2, a3]);
    const onlyA = encoder.encode([a1, a3]);
    expect(both2).toBe(both1);
    expect(onlyA).not.toBe(both1);
    expect(onlyA.toString()).toBe(frameOf(a1) + frameOf(a3));
    // A run that is the start of another is shared as well.
    expect(encoder.encode([a1, b2]).toString()).toBe(frameOf(a1) + frameOf(b2));
  });

  it('shares every continuation of a run within a turn, not only the first', () => {
    const encoder = new BatchEncoder();
    const ab = encoder.encode([a1, b2]);
    const aa = encoder.encode([a1, a3]);
    expect(encoder.encode([a1, a3])).toBe(aa);
    expect(encoder.encode([a1, b2])).toBe(ab);
  });

  it('ends a turn once however many batches it encodes, keeping what it used for the next', async () => {
    const encoder = new BatchEncoder();
    const first = encoder.encode([a1, b2]);
    encoder.encode([a1, b2]);
    encoder.encode([b2, a3]);
    await nextTurn();
    expect(encoder.encode([a1, b2])).toBe(first);
  });

  it('keeps a run across the turns that use it (the slices of one round of wakes)', async () => {
    const encoder = new BatchEncoder();
    const first = encoder.encode([a1, b2]);
    await nextTurn();
    expect(encoder.encode([a1, b2])).toBe(first);
    await nextTurn();
    expect(encoder.encode([a1, b2, a3])).toEqual(Buffer.from(frameOf(a1) + frameOf(b2) + frameOf(a3)));
  });

  it('drops a run after a turn that encodes without using it, and makes the same bytes again', async () => {
    const encoder = new BatchEncoder();
    const before = encoder.encode([a1, b2]);
    await nextTurn();
    encoder.encode([b2, a3]);
    await nextTurn();
    const after = encoder.encode([a1, b2]);
    expect(after).not.toBe(before);
    expect(after).toEqual(before);
  });
});
