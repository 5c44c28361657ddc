// When a failed delivery is tried again: after the n-th failure, the n-th delay of the schedule
// (`--monitor-retry-schedule`; Svix's by default: the first attempt at once, then 5 s, 5 min,
// 30 min, 2 h, 5 h, 10 h and 10 h, about 28 h in all); after the last, the monitor is disabled. A 429 or 503 with a
// Retry-After waits that long instead, capped at the schedule's longest delay so a bad header
// cannot park a monitor for weeks; the attempt still counts towards the schedule.

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `5s,5m,30m` → milliseconds; throws with the offending part. */
export function parseRetrySchedule(text: string): number[] {
  const delays = text.split(',').map((part) => {
    const match = /^\s*([0-9]+)(ms|s|m|h)\s*$/.exec(part);
    if (match === null) throw new Error(`"${part.trim()}" is not a delay: write a whole number with ms, s, m or h, e.g. 5s,5m,30m`);
    return Number(match[1]) * UNITS[match[2]!]!;
  });
  if (delays.length === 0 || delays.length > 50) throw new Error('give 1 to 50 delays');
  return delays;
}

/**
 * When to try again after `failures` failed attempts (1 after the first), or null when the
 * schedule is spent and the monitor is to be disabled. `retryAfterMs` is a 429/503's Retry-After.
 */
export function nextAttemptAt(schedule: readonly number[], failures: number, now: number, retryAfterMs?: number): number | null {
  const delay = schedule[failures - 1];
  if (delay === undefined) return null;
  return now + (retryAfterMs === undefined ? delay : Math.min(retryAfterMs, Math.max(...schedule)));
}

/** A Retry-After header in milliseconds: seconds, or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined;
  if (/^[0-9]+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
