// Rate limits counted in memory: windows and Retry-After on the monotonic clock, so a step of the
// wall clock neither lengthens a refusal nor a window.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpRefusal } from '../../src/http/errors.ts';
import { createRateLimiter } from '../../src/http/rate-limit.ts';

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
