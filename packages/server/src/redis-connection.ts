// What every Redis client of the service (the price log's, the rate limiter's) connects with,
// each written once.

/** A connection attempt that has not succeeded within this long fails, and the client retries. */
export const REDIS_CONNECT_TIMEOUT_MS = 2_000;

/**
 * ioredis's `retryStrategy`: reconnect forever, 100 ms after the first failure, doubling to at
 * most 500 ms between attempts, so a returning Redis is noticed promptly.
 */
export function redisReconnectDelay(attempts: number): number {
  return Math.min(50 * 2 ** Math.min(attempts, 4), 500);
}
