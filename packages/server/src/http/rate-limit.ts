// A token bucket per API key, held in this process's memory: each key may burst up to its
// per-minute allowance and refills continuously. Limits are per process, not shared between
// replicas.
import { HttpRefusal } from './errors.ts';

export interface RateLimiter {
  /** Takes one token for `key` or throws a 429 refusal carrying Retry-After. */
  take(key: string): void;
}

export function createRateLimiter(perMinute: number, now: () => number = Date.now): RateLimiter {
  if (perMinute <= 0) return { take: () => {} };
  const perMs = perMinute / 60_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(key) {
      const time = now();
      let bucket = buckets.get(key);
      if (bucket === undefined) {
        bucket = { tokens: perMinute, at: time };
        buckets.set(key, bucket);
      } else {
        bucket.tokens = Math.min(perMinute, bucket.tokens + (time - bucket.at) * perMs);
        bucket.at = time;
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return;
      }
      const seconds = Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
      throw new HttpRefusal(
        'rate_limited',
        `Rate limit of ${perMinute} requests per minute exceeded; retry in ${seconds} second${seconds === 1 ? '' : 's'}.`,
        { 'retry-after': String(seconds) },
      );
    },
  };
}
