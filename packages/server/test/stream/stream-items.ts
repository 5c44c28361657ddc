import type { StreamItem } from '../../src/stream/subscription.ts';

/**
 * A subscription's batches one item at a time, for tests that count items. A pull takes a whole
 * batch from the subscription; return() ends the subscription.
 */
export function itemsOf(batches: AsyncIterable<readonly StreamItem[]>): AsyncIterator<StreamItem> {
  const iterator = batches[Symbol.asyncIterator]();
  let taken: StreamItem[] = [];
  return {
    next: async () => {
      while (taken.length === 0) {
        const result = await iterator.next();
        if (result.done === true) return { done: true, value: undefined };
        taken = [...result.value];
      }
      return { done: false, value: taken.shift() as StreamItem };
    },
    return: async () => {
      taken = [];
      await iterator.return?.();
      return { done: true, value: undefined };
    },
  };
}
