// Rate limits shared through Redis: two limiters (as two instances would hold) with one Redis count
// per key and per address, and a Redis that is down, paused or whose clock-free TTLs outlast a step
// of the wall clock falling back to counting in memory without a wait; the breaker's one warning,
// its PING probe, the reconnect backoff, and what close() releases.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpRefusal } from '../../src/http/errors.ts';
import { createRateLimiter, rateLimiterFor, type RateLimiter } from '../../src/http/rate-limit.ts';
import { loadConfig } from '../../src/cli/command-line.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { rateLimitStoreFallbacks } from '../../src/metrics.ts';
import { startRedisServer, type TestRedisServer } from '../support/redis-test-server.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
const UNREACHABLE_URL = 'redis://127.0.0.1:1';
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

function capturedLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { logger: createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }), lines };
}

async function outcome(take: Promise<Record<string, string>> | null): Promise<string> {
  try {
    const headers = await take;
    return headers?.['ratelimit'] ?? 'unlimited';
  } catch (error) {
    return error instanceof HttpRefusal ? `${error.code} ${error.headers['retry-after']}` : String(error);
  }
}

/** Resolves once a count taken by `limiter` (for a new key) lands in the Redis at `url` under `prefix`. */
async function countsInRedisAgain(limiter: RateLimiter, url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    await expect
      .poll(
        async () => {
          await limiter.take('key-2', 'free');
          return (await redis.keys(`${prefix}free:*`)).length;
        },
        { timeout: 5_000, interval: 100 },
      )
      .toBeGreaterThan(0);
  } finally {
    redis.disconnect();
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
    // One count per plan, each under its plan's name.
    expect(new Set(stored.map((name) => name.slice(prefix.length, name.indexOf(':', prefix.length))))).toEqual(new Set(['free', 'pro']));
    // Once connected, connected() answers at once.
    expect(await a.connected()).toBe(true);
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
    const redis = new Redis(REDIS_URL);
    const stored = await redis.keys(`${prefix}*`);
    redis.disconnect();
    expect(stored.sort()).toEqual([`${prefix}auth-failures:10.0.0.1`, `${prefix}auth-failures:10.0.0.2`]);
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
    const { logger, lines } = capturedLogger();
    const paused = createRateLimiter({ perMinute: { free: 1_000, pro: 1_000 }, authFailuresPerMinute: 0 }, { redisUrl: server.url, keyPrefix: prefix, logger });
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
    // All were answered while Redis was still paused.
    expect(waits.reduce((sum, ms) => sum + ms, 0)).toBeLessThan(2_000);
    expect(lines.filter((line) => line['level'] === 'warn')).toEqual([
      expect.objectContaining({ msg: 'rate limit store not answering; counting in memory until it does', store: 'redis', failures: 3 }),
    ]);
    // Once the pause is over, a probe finds Redis answering and counts reach Redis again.
    await expect.poll(() => lines.filter((line) => line['level'] === 'info'), { timeout: 5_000, interval: 50 }).toEqual([
      expect.objectContaining({ msg: 'rate limit store answering again; counting in Redis', store: 'redis' }),
    ]);
    const redis = new Redis(server.url);
    try {
      const before = (await redis.keys(`${prefix}free:*`)).length;
      await paused.take('key-2', 'free');
      expect((await redis.keys(`${prefix}free:*`)).length).toBe(before + 1);
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

describe('the Redis circuit breaker', () => {
  it('counts in memory from the third failure in a row on, and warns once', async () => {
    const { logger, lines } = capturedLogger();
    const down = createRateLimiter({ perMinute: { free: 10, pro: 10 }, authFailuresPerMinute: 0 }, { redisUrl: UNREACHABLE_URL, keyPrefix: 'unused:', logger });
    opened.push(down);
    const fallbacksBefore = (await rateLimitStoreFallbacks.get()).values[0]?.value ?? 0;
    // Five commands in flight at once: the fourth and fifth fail after the breaker opened.
    const results = await Promise.all(Array.from({ length: 5 }, () => outcome(down.take('key-1', 'free'))));
    expect(results.map((r) => r.replace(/;t=\d+$/, ''))).toEqual(['"free";r=9', '"free";r=8', '"free";r=7', '"free";r=6', '"free";r=5']);
    expect((await rateLimitStoreFallbacks.get()).values[0]?.value).toBe(fallbacksBefore + 5);
    expect(lines.filter((line) => line['level'] === 'warn')).toEqual([
      {
        level: 'warn',
        time: expect.any(String),
        msg: 'rate limit store not answering; counting in memory until it does',
        store: 'redis',
        failures: 3,
        // Refused before reaching ioredis: nothing is sent while the connection is down.
        error: 'Redis connection is not ready',
      },
    ]);
    await expect
      .poll(() => lines.find((line) => line['msg'] === 'rate limit Redis connection error'))
      .toEqual({ level: 'debug', time: expect.any(String), msg: 'rate limit Redis connection error', error: expect.stringContaining('ECONNREFUSED') });
  });

  it('warns of no failure that ends after close()', async () => {
    const { logger, lines } = capturedLogger();
    const down = createRateLimiter({ perMinute: { free: 10, pro: 10 }, authFailuresPerMinute: 0 }, { redisUrl: UNREACHABLE_URL, keyPrefix: 'unused:', logger });
    const pending = Array.from({ length: 3 }, () => outcome(down.take('key-1', 'free')));
    await down.close();
    await Promise.all(pending);
    expect(lines.filter((line) => line['level'] === 'warn')).toEqual([]);
  });

  it('stops probing Redis once closed, even with a probe in flight', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const down = createRateLimiter({ perMinute: { free: 10, pro: 10 }, authFailuresPerMinute: 0 }, { redisUrl: UNREACHABLE_URL, keyPrefix: 'unused:' });
    for (let i = 0; i < 3; i++) await down.take('key-1', 'free');
    // The breaker is open: the first probe's PING is sent, and the limiter closed before it fails.
    vi.advanceTimersByTime(500);
    await down.close();
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reconnects to Redis after 100, 200 and 400 ms, then every 500 ms', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { logger, lines } = capturedLogger();
    opened.push(createRateLimiter({ perMinute: { free: 1, pro: 1 }, authFailuresPerMinute: 0 }, { redisUrl: UNREACHABLE_URL, logger }));
    const refusals = (): number => lines.filter((line) => line['msg'] === 'rate limit Redis connection error').length;
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      // Each refused attempt, and the retry it schedules, arrive through the event loop, which fake timers do not run.
      for (let spin = 0; spin < 10_000 && (refusals() < attempt || vi.getTimerCount() === 0); spin++) await new Promise((resolve) => setImmediate(resolve));
      const before = Date.now();
      vi.advanceTimersToNextTimer();
      delays.push(Date.now() - before);
    }
    expect(delays).toEqual([100, 200, 400, 500, 500]);
  });

  it('cancels a waiting probe on close()', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const down = createRateLimiter({ perMinute: { free: 10, pro: 10 }, authFailuresPerMinute: 0 }, { redisUrl: UNREACHABLE_URL, keyPrefix: 'unused:' });
    for (let i = 0; i < 3; i++) await down.take('key-1', 'free');
    await down.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it.each([
    ['allowed', 1_000],
    ['refused', 1],
  ])('counts failures in a row only: a command Redis answers (%s) starts the count afresh', async (_answer, quota) => {
    const server = await startRedisServer();
    servers.push(server);
    const { logger, lines } = capturedLogger();
    const flaky = createRateLimiter({ perMinute: { free: quota, pro: quota }, authFailuresPerMinute: 0 }, { redisUrl: server.url, keyPrefix: 'flaky:', logger });
    opened.push(flaky);
    expect(await flaky.connected()).toBe(true);
    await flaky.take('key-1', 'free')?.catch(() => {});
    for (let i = 0; i < 3; i++) {
      // The command times out (250 ms) during the pause; the next one is answered after it.
      await server.pause(300);
      await outcome(flaky.take('key-1', 'free'));
      await outcome(flaky.take('key-1', 'free'));
    }
    expect(lines.filter((line) => line['level'] === 'warn')).toEqual([]);
  });

  it('reconnects once Redis is back, probes it, and counts there again', async () => {
    const server = await startRedisServer();
    servers.push(server);
    const { logger, lines } = capturedLogger();
    const restarted = createRateLimiter({ perMinute: { free: 1_000, pro: 1_000 }, authFailuresPerMinute: 0 }, { redisUrl: server.url, keyPrefix: 'restarted:', logger });
    opened.push(restarted);
    expect(await restarted.connected()).toBe(true);
    await server.kill();
    for (let i = 0; i < 3; i++) expect(await outcome(restarted.take('key-1', 'free'))).toMatch(/^"free";r=\d+;t=\d+$/);
    await server.restart();
    await countsInRedisAgain(restarted, server.url, 'restarted:');
    expect(lines.filter((line) => line['level'] === 'info')).toEqual([
      expect.objectContaining({ msg: 'rate limit store answering again; counting in Redis', store: 'redis' }),
    ]);
  });

  it('counts in Redis again after an outage without a logger', async () => {
    const server = await startRedisServer();
    servers.push(server);
    const unlogged = createRateLimiter({ perMinute: { free: 1_000, pro: 1_000 }, authFailuresPerMinute: 0 }, { redisUrl: server.url, keyPrefix: 'unlogged:' });
    opened.push(unlogged);
    expect(await unlogged.connected()).toBe(true);
    await server.kill();
    for (let i = 0; i < 3; i++) await unlogged.take('key-1', 'free');
    await server.restart();
    await countsInRedisAgain(unlogged, server.url, 'unlogged:');
  });

  it('takes Redis connection errors in its stride without a logger', async () => {
    limiter('unused:', UNREACHABLE_URL);
    // A limiter with a logger, connecting after the one without: once it logs its connection error, the first has had its own.
    const { logger, lines } = capturedLogger();
    opened.push(createRateLimiter({ perMinute: { free: 1, pro: 1 }, authFailuresPerMinute: 0 }, { redisUrl: UNREACHABLE_URL, logger }));
    await expect.poll(() => lines.some((line) => line['msg'] === 'rate limit Redis connection error')).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
  });

  it('leaves no timer holding the process open once connected', async () => {
    const server = await startRedisServer();
    servers.push(server);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const connecting = limiter('unused:', server.url);
    expect(await connecting.connected()).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('leaves no listener behind on a connected() that timed out', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning);
    };
    process.on('warning', onWarning);
    try {
      const down = limiter('unused:', UNREACHABLE_URL);
      // One more than EventEmitter's default limit of listeners.
      for (let i = 0; i < 11; i++) {
        const connected = down.connected();
        await vi.advanceTimersByTimeAsync(2_000);
        expect(await Promise.race([connected, Promise.resolve('pending')])).toBe(false);
      }
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('settles connected() with false after 2 s without Redis', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const down = limiter('unused:', UNREACHABLE_URL);
    const connected = down.connected();
    await vi.advanceTimersByTimeAsync(1_999);
    const early = await Promise.race([connected, Promise.resolve('pending')]);
    await vi.advanceTimersByTimeAsync(1);
    expect([early, await Promise.race([connected, Promise.resolve('pending')])]).toEqual(['pending', false]);
  });

  it('closes its connection to Redis on close()', async () => {
    const server = await startRedisServer();
    servers.push(server);
    const closing = createRateLimiter({ perMinute: { free: 1, pro: 1 }, authFailuresPerMinute: 0 }, { redisUrl: server.url });
    expect(await closing.connected()).toBe(true);
    const redis = new Redis(server.url);
    try {
      const clients = async (): Promise<number> => String(await redis.call('CLIENT', 'LIST')).trim().split('\n').length;
      expect(await clients()).toBe(2);
      await closing.close();
      await expect.poll(clients, { timeout: 2_000, interval: 20 }).toBe(1);
    } finally {
      redis.disconnect();
    }
  });
});

describe('rateLimiterFor', () => {
  const configWith = (store: string) => loadConfig(['--db', 'sqlite:/nonexistent/catalog.db', '--rate-limit', '5', '--rate-limit-store', store], {});

  it('counts in memory for --rate-limit-store memory', async () => {
    const inMemory = rateLimiterFor(configWith('memory'), createLogger({ write: () => {} }));
    opened.push(inMemory);
    expect(await inMemory.connected()).toBe(true);
    expect(await outcome(inMemory.take('key-1', 'free'))).toMatch(/^"free";r=4;t=\d+$/);
  });

  it('counts in Redis for --rate-limit-store redis://…', async () => {
    const server = await startRedisServer();
    servers.push(server);
    const shared = rateLimiterFor(configWith(server.url), createLogger({ write: () => {} }));
    opened.push(shared);
    expect(await shared.connected()).toBe(true);
    await shared.take('key-1', 'free');
    const redis = new Redis(server.url);
    const stored = await redis.keys('*');
    redis.disconnect();
    expect(stored).toEqual([expect.stringMatching(/^catalog:ratelimit:free:/)]);
  });
});
