// What operators read in the logs: errors with their cause chain and code, no throw on values JSON
// cannot hold, no Authorization value, and the fields they filter on.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';

function capture(): { lines: Record<string, unknown>[]; logger: ReturnType<typeof createLogger> } {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }) };
}

describe('the logger', () => {
  it('writes an error with its message, code, stack and cause chain', () => {
    const { lines, logger } = capture();
    const outage = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    logger.error('catalog request failed', { error: new Error('The catalog database is unavailable; retry shortly.', { cause: outage }), request_id: 'r1' });
    const [line] = lines;
    expect(line).toMatchObject({ level: 'error', msg: 'catalog request failed', request_id: 'r1' });
    const error = line!['error'] as Record<string, unknown>;
    expect(error['message']).toContain('unavailable');
    expect(String(error['stack'])).toContain('logger.test.ts');
    expect(error['cause']).toMatchObject({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' });
  });

  it('never throws on cycles or BigInt, and redacts Authorization wherever it appears', () => {
    const { lines, logger } = capture();
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic['self'] = cyclic;
    expect(() => logger.info('odd values', { cyclic, big: 10n ** 30n })).not.toThrow();
    logger.warn('request refused', { authorization: 'Bearer ck_secret_1', headers: { authorization: 'ck_secret_2' }, req: { headers: { authorization: 'ck_secret_3' } } });
    const text = JSON.stringify(lines);
    expect(lines).toHaveLength(2);
    for (const secret of ['ck_secret_1', 'ck_secret_2', 'ck_secret_3']) expect(text).not.toContain(secret);
    expect(lines[1]).toMatchObject({ authorization: '[redacted]', headers: { authorization: '[redacted]' } });
  });

  it('keeps the level names, the time, and the fields of children', () => {
    const { lines, logger } = capture();
    logger.child({ request_id: 'r2' }).debug('detail', { n: 1 });
    expect(lines[0]).toMatchObject({ level: 'debug', msg: 'detail', request_id: 'r2', n: 1 });
    expect(Date.parse(String(lines[0]!['time']))).not.toBeNaN();
  });
});
