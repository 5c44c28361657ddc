import { describe, expect, it } from 'vitest';
import { nextAttemptAt, parseRetrySchedule, retryAfterMs } from '../../src/monitors/retry-schedule.ts';

describe('the retry schedule', () => {
  it('reads delays in ms, s, m and h, and refuses anything else naming the part', () => {
    expect(parseRetrySchedule('5s,5m,30m,2h,250ms')).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 250]);
    expect(() => parseRetrySchedule('5s,soon')).toThrow('"soon" is not a delay');
  });

  it('waits the n-th delay after the n-th failure, then gives up', () => {
    const schedule = [5_000, 300_000];
    expect(nextAttemptAt(schedule, 1, 1_000)).toBe(6_000);
    expect(nextAttemptAt(schedule, 2, 1_000)).toBe(301_000);
    expect(nextAttemptAt(schedule, 3, 1_000)).toBeNull();
  });

  it("waits a 429's or 503's Retry-After instead, at most the schedule's longest delay", () => {
    expect(nextAttemptAt([5_000, 300_000], 1, 0, 60_000)).toBe(60_000);
    expect(nextAttemptAt([5_000, 300_000], 1, 0, 86_400_000)).toBe(300_000);
    expect(retryAfterMs('120', 0)).toBe(120_000);
    expect(retryAfterMs(new Date(30_000).toUTCString(), 0)).toBe(30_000);
    expect(retryAfterMs('later', 0)).toBeUndefined();
  });
});
