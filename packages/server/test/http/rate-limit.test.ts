// Rate limits counted in memory: windows and Retry-After on the monotonic clock, so a step of the
// wall clock neither lengthens a refusal nor a window.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpRefusal } from '../../src/http/errors.ts';
import { createRateLimiter, MemoryWindows } from '../../src/http/rate-limit.ts';
import { registry } from '../../src/metrics.ts';

afterEach(() => {
  vi.useRealTimers();
});

async function retryAfter(take: Promise<Record<string, string>> | null): Promise<string> {
  try {
    await take;
    return 'allowed';
  } catch (error) {
    if (!(error instanceof HttpRefusal)) throw error;
    return error.headers['retry-after'] ?? 'no retry-after';
  }
}

describe('rate limits in memory', () => {
  it.each([
    ['back an hour', -3_600_000],
    ['forward an hour', 3_600_000],
    ['back 30 seconds', -30_000],
  ])('keeps Retry-After within the window when the wall clock steps %s', async (_step, stepMs) => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const limiter = createRateLimiter({ perMinute: { free: 2, pro: 2 }, authFailuresPerMinute: 2 });
    await limiter.take('key', 'free');
    await limiter.take('key', 'free');
    vi.setSystemTime(Date.now() + stepMs);
    expect(Number(await retryAfter(limiter.take('key', 'free')))).toBeLessThanOrEqual(60);
    // The window ends a minute after it began, by the monotonic clock.
    vi.advanceTimersByTime(60_000);
    expect(await retryAfter(limiter.take('key', 'free'))).toBe('allowed');
    await limiter.close();
  });

  it('keeps the failed-authentication allowance within its window when the wall clock steps back', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const limiter = createRateLimiter({ perMinute: { free: 0, pro: 0 }, authFailuresPerMinute: 1 });
    expect(await limiter.failedAuthentication('10.0.0.1')).toBeNull();
    vi.setSystemTime(Date.now() - 3_600_000);
    const refusal = await limiter.failedAuthentication('10.0.0.1');
    expect(Number(refusal?.headers['retry-after'])).toBeLessThanOrEqual(60);
    vi.advanceTimersByTime(60_000);
    expect(await limiter.failedAuthentication('10.0.0.1')).toBeNull();
  });
});

describe('MemoryWindows', () => {
  it('ends a window a window length after its first count, across the sweep of ended windows', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const windows = new MemoryWindows(1, 60_000);
    vi.advanceTimersByTime(30_000);
    expect(windows.consume('a')).toEqual({ remainingPoints: 0, msBeforeNext: 60_000 });
    vi.advanceTimersByTime(30_000);
    // This count sweeps ended windows; a's has 30 s to go.
    windows.consume('b');
    expect(windows.consume('a')).toEqual({ remainingPoints: -1, msBeforeNext: 30_000 });
    vi.advanceTimersByTime(30_000);
    expect(windows.consume('a')).toEqual({ remainingPoints: 0, msBeforeNext: 60_000 });
  });

  it('drops ended windows once per window length, so a flood of keys is held for about two windows', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const windows = new MemoryWindows(1, 60_000);
    vi.advanceTimersByTime(30_000);
    windows.consume('a');
    vi.advanceTimersByTime(30_000);
    windows.consume('b');
    vi.advanceTimersByTime(40_000);
    windows.consume('c');
    // a's window ended 10 s ago; the next sweep is due 60 s after the last.
    expect(windows.size).toBe(3);
    vi.advanceTimersByTime(20_000);
    windows.consume('d');
    expect(windows.size).toBe(2);
  });
});

describe('rate limit refusals in memory', () => {
  const refusal = async (pending: Promise<unknown> | null): Promise<HttpRefusal> => {
    const error: unknown = await pending?.then(
      () => undefined,
      (rejection: unknown) => rejection,
    );
    if (!(error instanceof HttpRefusal)) throw new Error(`expected a refusal, got ${String(error)}`);
    return error;
  };

  it('says how many seconds are left in the window of a key', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const limiter = createRateLimiter({ perMinute: { free: 1, pro: 0 }, authFailuresPerMinute: 0 });
    await limiter.take('key', 'free');
    vi.advanceTimersByTime(30_000);
    const thirty = await refusal(limiter.take('key', 'free'));
    expect(thirty.message).toBe('Rate limit of 1 requests per minute for the free plan exceeded; retry in 30 seconds.');
    expect(thirty.headers).toEqual({ 'retry-after': '30', 'ratelimit-policy': '"free";q=1;w=60', ratelimit: '"free";r=0;t=30' });
    vi.advanceTimersByTime(29_500);
    const one = await refusal(limiter.take('key', 'free'));
    expect(one.message).toBe('Rate limit of 1 requests per minute for the free plan exceeded; retry in 1 second.');
    expect(one.headers['retry-after']).toBe('1');
  });

  it('says how many seconds are left in the failed-authentication window of an address, and counts the refusal', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const limiter = createRateLimiter({ perMinute: { free: 0, pro: 0 }, authFailuresPerMinute: 1 });
    const refusedAddresses = async (): Promise<number> =>
      (await registry.getSingleMetric('catalog_rate_limit_refusals_total')?.get())?.values.find((value) => value.labels['limit'] === 'address')?.value ?? 0;
    const before = await refusedAddresses();
    expect(await limiter.failedAuthentication('10.0.0.1')).toBeNull();
    vi.advanceTimersByTime(30_000);
    const thirty = await limiter.failedAuthentication('10.0.0.1');
    expect(thirty?.message).toBe('Too many requests with a missing or unknown API key from this address; retry in 30 seconds.');
    expect(thirty?.headers).toEqual({ 'retry-after': '30' });
    vi.advanceTimersByTime(29_500);
    const one = await limiter.failedAuthentication('10.0.0.1');
    expect(one?.message).toBe('Too many requests with a missing or unknown API key from this address; retry in 1 second.');
    expect(await refusedAddresses()).toBe(before + 2);
  });

  it('is connected at once without Redis', async () => {
    const limiter = createRateLimiter({ perMinute: { free: 1, pro: 1 }, authFailuresPerMinute: 1 });
    expect(await limiter.connected()).toBe(true);
  });
});
