import { afterEach, describe, expect, it, vi } from 'vitest';
import { logAnswer, REFUSAL_WINDOW_MS, REFUSALS_LOGGED_PER_WINDOW } from '../../src/http/refusal-log.ts';
import { createLogger } from '../../src/logger.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('logAnswer', () => {
  it('logs every answer but 4xx in full, and per status the first refusals of a window, then one summary line', () => {
    vi.useFakeTimers();
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    for (let i = 0; i < 1000; i++) logAnswer(logger, 'request', { status: 401, request_id: `a${i}` });
    for (let i = 0; i < 5; i++) logAnswer(logger, 'request', { status: 429 });
    for (let i = 0; i < 50; i++) logAnswer(logger, 'request', { status: 200 });
    logAnswer(logger, 'request', { status: 503 });
    const byStatus = (status: number) => lines.filter((line) => line['msg'] === 'request' && line['status'] === status).length;
    expect([byStatus(401), byStatus(429), byStatus(200), byStatus(503)]).toEqual([REFUSALS_LOGGED_PER_WINDOW, 5, 50, 1]);
    expect(lines.some((line) => line['msg'] === 'refusals not logged')).toBe(false);
    vi.advanceTimersByTime(REFUSAL_WINDOW_MS);
    expect(lines.filter((line) => line['msg'] === 'refusals not logged')).toEqual([
      expect.objectContaining({ level: 'warn', count: 1000 - REFUSALS_LOGGED_PER_WINDOW, by_status: { '401': 1000 - REFUSALS_LOGGED_PER_WINDOW } }),
    ]);
    // A new window logs again.
    logAnswer(logger, 'request', { status: 401, request_id: 'next' });
    expect(lines.at(-1)).toMatchObject({ msg: 'request', request_id: 'next' });
  });
});
