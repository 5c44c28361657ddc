// Rate limits shared through Redis: two limiters (as two instances would hold) with one Redis count
// per key and per address, and a Redis that is down, paused or whose clock-free TTLs outlast a step
// of the wall clock falling back to counting in memory without a wait.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpRefusal } from '../../src/http/errors.ts';
import { createRateLimiter, type RateLimiter } from '../../src/http/rate-limit.ts';
import { startRedisServer, type TestRedisServer } from '../support/redis-test-server.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
const opened: RateLimiter[] = [];
const servers: TestRedisServer[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(opened.splice(0).map((limiter) => limiter.close()));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

function limiter(keyPrefix: string, redisUrl = REDIS_URL, windowSeconds?: number): RateLimiter {
  const created = createRateLimiter(
    { perMinute: { free: 3, pro: 5 }, authFailuresPerMinute: 2 },
    { redisUrl, keyPrefix, ...(windowSeconds === undefined ? {} : { windowSeconds }) },
  );
  opened.push(created);
  return created;
}

async function outcome(take: Promise<Record<string, string>> | null): Promise<string> {
  try {
    const headers = await take;
    return headers?.['ratelimit'] ?? 'unlimited';
  } catch (error) {
    return error instanceof HttpRefusal ? `${error.code} ${error.headers['retry-after']}` : String(error);
  }
}

describe('rate limits through Redis', () => {
  it('counts one quota per key across instances', async () => {
    const prefix = `test:${randomUUID()}:`;
    const [a, b] = [limiter(prefix), limiter(prefix)];
    expect(await Promise.all([a.connected(), b.connected()])).toEqual([true, true]);
    const results = [];
    for (const instance of [a, b, a, b]) results.push(await outcome(instance.take('key-1', 'free')));
    expect(results.slice(0, 3).map((r) => r.replace(/;t=\d+$/, ''))).toEqual(['"free";r=2', '"free";r=1', '"free";r=0']);
    expect(results[3]).toMatch(/^rate_limited \d+$/);
    // Another key, and the other plan's quota, are separate.
    expect(await outcome(b.take('key-2', 'free'))).toMatch(/^"free";r=2;t=\d+$/);
    expect(await outcome(a.take('key-3', 'pro'))).toMatch(/^"pro";r=4;t=\d+$/);
    // Redis holds the counts under digests of the keys, never a key itself.
    const redis = new Redis(REDIS_URL);
    const stored = await redis.keys(`${prefix}*`);
    redis.disconnect();
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.filter((name) => /key-[0-9]/.test(name))).toEqual([]);
  });

  it('counts failed authentications per address across instances', async () => {
    const prefix = `test:${randomUUID()}:`;
    const [a, b] = [limiter(prefix), limiter(prefix)];
    expect(await Promise.all([a.connected(), b.connected()])).toEqual([true, true]);
    expect(await a.failedAuthentication('10.0.0.1')).toBeNull();
    expect(await b.failedAuthentication('10.0.0.1')).toBeNull();
    const refusal = await a.failedAuthentication('10.0.0.1');
    expect(refusal?.code).toBe('rate_limited');
    expect(await b.failedAuthentication('10.0.0.2')).toBeNull();
  });

  it('keeps limiting, in memory and without stalling, while Redis is unreachable', async () => {
    const down = limiter(`test:${randomUUID()}:`, 'redis://127.0.0.1:1');
    const started = performance.now();
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await outcome(down.take('key-1', 'free')));
    expect(results[3]).toMatch(/^rate_limited \d+$/);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('counts in memory at once while Redis is paused, and in Redis again once it answers', async () => {
    const server = await startRedisServer();
    servers.push(server);
    const prefix = `test:${randomUUID()}:`;
    const paused = createRateLimiter({ perMinute: { free: 1_000, pro: 1_000 }, authFailuresPerMinute: 0 }, { redisUrl: server.url, keyPrefix: prefix });
    opened.push(paused);
    expect(await paused.connected()).toBe(true);
    await server.pause(2_500);
    const waits: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      expect(await outcome(paused.take('key-1', 'free'))).toMatch(/^"free";r=\d+;t=\d+$/);
      waits.push(performance.now() - started);
    }
    // A few requests wait for the command timeout before the breaker opens; the rest do not wait.
    expect(waits.filter((ms) => ms > 200).length).toBeLessThanOrEqual(3);
    // Once the pause is over, counts reach Redis again.
    const redis = new Redis(server.url);
    try {
      await expect
        .poll(
          async () => {
            await paused.take('key-2', 'free');
            return (await redis.keys(`${prefix}free*`)).length;
          },
          { timeout: 5_000, interval: 200 },
        )
        .toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });

  it('ends a refusal with its window in Redis, whatever the wall clock does', async () => {
    const prefix = `test:${randomUUID()}:`;
    const limited = limiter(prefix, REDIS_URL, 1);
    expect(await limited.connected()).toBe(true);
    for (let i = 0; i < 3; i++) await limited.take('key-1', 'free');
    expect(await outcome(limited.take('key-1', 'free'))).toBe('rate_limited 1');
    // The wall clock steps back an hour; the window still ends after its second.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 3_600_000 });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await outcome(limited.take('key-1', 'free'))).toMatch(/^"free";r=2;t=1$/);
  });
});
