import { afterEach, describe, expect, it, vi } from 'vitest';
import { logAnswer, REFUSAL_WINDOW_MS, REFUSALS_LOGGED_PER_WINDOW } from '../../src/http/refusal-log.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { registry } from '../../src/metrics.ts';

afterEach(() => {
  vi.useRealTimers();
});

async function metricValue(name: string, labels: Record<string, string>, series = name): Promise<number> {
  // A histogram's values are its series (`_bucket`, `_sum`, `_count`), each named by metricName.
  const values: readonly { value: number; labels: Partial<Record<string, string | number>>; metricName?: string }[] =
    (await registry.getSingleMetric(name)?.get())?.values ?? [];
  const found = values.find(
    (value) => (value.metricName ?? name) === series && Object.entries(labels).every(([label, wanted]) => String(value.labels[label]) === wanted),
  );
  return found?.value ?? 0;
}

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

describe('logAnswer in the metrics', () => {
  it('counts an answer without an operation as other, and its duration in seconds', async () => {
    const logger = createLogger({ level: 'info', write: () => {} });
    const requestsBefore = await metricValue('catalog_http_requests_total', { operation: 'other', status: '299' });
    const secondsBefore = await metricValue('catalog_http_request_duration_seconds', { operation: 'refusalLogTest' }, 'catalog_http_request_duration_seconds_sum');
    logAnswer(logger, 'request', { status: 299 });
    logAnswer(logger, 'request', { status: 200, operation: 'refusalLogTest', ms: 1500 });
    expect(await metricValue('catalog_http_requests_total', { operation: 'other', status: '299' })).toBe(requestsBefore + 1);
    expect(await metricValue('catalog_http_request_duration_seconds', { operation: 'refusalLogTest' }, 'catalog_http_request_duration_seconds_sum')).toBeCloseTo(
      secondsBefore + 1.5,
    );
  });
});

describe('logAnswer sampling', () => {
  function capture(): { logger: Logger; lines: Record<string, unknown>[] } {
    const lines: Record<string, unknown>[] = [];
    return { logger: createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }), lines };
  }
  const count = (lines: Record<string, unknown>[], status: number): number => lines.filter((line) => line['msg'] === 'request' && line['status'] === status).length;
  const summaries = (lines: Record<string, unknown>[]): Record<string, unknown>[] => lines.filter((line) => line['msg'] === 'refusals not logged');

  it('samples 400 like every 4xx, and logs every 500 and 502', () => {
    vi.useFakeTimers();
    const { logger, lines } = capture();
    for (const status of [400, 500, 502]) for (let i = 0; i < REFUSALS_LOGGED_PER_WINDOW + 5; i++) logAnswer(logger, 'request', { status });
    expect([count(lines, 400), count(lines, 500), count(lines, 502)]).toEqual([REFUSALS_LOGGED_PER_WINDOW, REFUSALS_LOGGED_PER_WINDOW + 5, REFUSALS_LOGGED_PER_WINDOW + 5]);
  });

  it('writes no summary for a window that skipped nothing, and each window its own count', () => {
    vi.useFakeTimers();
    const { logger, lines } = capture();
    for (let i = 0; i < REFUSALS_LOGGED_PER_WINDOW; i++) logAnswer(logger, 'request', { status: 404 });
    vi.advanceTimersByTime(REFUSAL_WINDOW_MS);
    expect(summaries(lines)).toEqual([]);
    for (let i = 0; i < REFUSALS_LOGGED_PER_WINDOW + 1; i++) logAnswer(logger, 'request', { status: 404 });
    vi.advanceTimersByTime(REFUSAL_WINDOW_MS);
    for (let i = 0; i < REFUSALS_LOGGED_PER_WINDOW + 2; i++) logAnswer(logger, 'request', { status: 404 });
    vi.advanceTimersByTime(REFUSAL_WINDOW_MS);
    expect(summaries(lines).map((line) => line['count'])).toEqual([1, 2]);
  });

  it('times a window from its first refusal; later refusals do not start another', () => {
    vi.useFakeTimers();
    const { logger, lines } = capture();
    logAnswer(logger, 'request', { status: 401 });
    vi.advanceTimersByTime(REFUSAL_WINDOW_MS / 2);
    logAnswer(logger, 'request', { status: 401 });
    vi.advanceTimersByTime(REFUSAL_WINDOW_MS / 2 + 1_000);
    // A new window, begun 1 s after the first ended: it logs its first refusals, then skips the rest.
    for (let i = 0; i < REFUSALS_LOGGED_PER_WINDOW; i++) logAnswer(logger, 'request', { status: 401 });
    vi.advanceTimersByTime(REFUSAL_WINDOW_MS / 2);
    logAnswer(logger, 'request', { status: 401 });
    expect(count(lines, 401)).toBe(2 + REFUSALS_LOGGED_PER_WINDOW);
  });

  it('does not keep the process alive for the rest of a window', () => {
    const { logger } = capture();
    const timers = (): number => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const before = timers();
    logAnswer(logger, 'request', { status: 403 });
    expect(timers()).toBe(before);
  });
});
