import type { PriceLog } from '../../src/prices/price-log.ts';
import { storedJson } from '../../src/catalog/raw-json.ts';

/** An empty price log whose follow() fails soon after it starts, as a disk or a server gone away. */
export function logWhoseFollowFails(): PriceLog {
  return {
    append: async () => [],
    readAfter: async () => [],
    bounds: async () => null,
    latestPrices: async () => ({ data: storedJson('[]'), position: 0 }),
    follow: async function* () {
      await new Promise((resolve) => setTimeout(resolve, 10));
      yield* [];
      throw new Error('disk gone');
    },
    ping: async () => {},
    close: async () => {},
  };
}
