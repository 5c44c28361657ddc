// Access lines for refused requests (4xx), sampled so that a flood cannot fill a disk: per logger
// and status, the first REFUSALS_LOGGED_PER_WINDOW refusals of each window are logged in full; the
// rest are counted and reported as one `refusals not logged` line when the window ends. Answers
// other than 4xx are always logged. Both listeners log through here.
import type { Logger } from '../logger.ts';
import { observeRequest } from '../metrics.ts';

export const REFUSAL_WINDOW_MS = 10_000;
export const REFUSALS_LOGGED_PER_WINDOW = 20;

interface Window {
  logged: Map<number, number>;
  skipped: Map<number, number>;
  timer: NodeJS.Timeout | null;
}

const windows = new WeakMap<Logger, Window>();

/**
 * Counts the answer in the metrics (by `operation`, `other` when absent) and writes the access
 * line `fields` as `msg`, sampled when the status is 4xx.
 */
export function logAnswer(logger: Logger, msg: string, fields: { status: number; operation?: string; ms?: number } & Record<string, unknown>): void {
  const { status } = fields;
  observeRequest(fields.operation ?? 'other', status, (fields.ms ?? 0) / 1000);
  if (status < 400 || status >= 500) {
    logger.info(msg, fields);
    return;
  }
  let window = windows.get(logger);
  if (window === undefined) {
    window = { logged: new Map(), skipped: new Map(), timer: null };
    windows.set(logger, window);
  }
  if (window.timer === null) {
    const current = window;
    current.timer = setTimeout(() => closeWindow(logger, current), REFUSAL_WINDOW_MS);
    current.timer.unref();
  }
  const logged = window.logged.get(status) ?? 0;
  if (logged < REFUSALS_LOGGED_PER_WINDOW) {
    window.logged.set(status, logged + 1);
    logger.info(msg, fields);
    return;
  }
  window.skipped.set(status, (window.skipped.get(status) ?? 0) + 1);
}

function closeWindow(logger: Logger, window: Window): void {
  window.timer = null;
  window.logged.clear();
  if (window.skipped.size === 0) return;
  const by_status = Object.fromEntries(window.skipped);
  const count = [...window.skipped.values()].reduce((sum, n) => sum + n, 0);
  window.skipped.clear();
  logger.warn('refusals not logged', { count, by_status, window_ms: REFUSAL_WINDOW_MS });
}
