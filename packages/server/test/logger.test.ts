// What operators read in the logs: errors with their cause chain and code, no throw on values JSON
// cannot hold, no Authorization value, and the fields they filter on.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, createServiceLogger } from '../src/logger.ts';

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

  it("redacts a child's Authorization binding, and never changes the caller's objects", () => {
    const { lines, logger } = capture();
    const fields = { req: { method: 'GET', headers: { authorization: 'ck_secret_4', host: 'h' } }, authorization: 'ck_secret_5' };
    logger.child({ authorization: 'ck_secret_6' }).info('request', fields);
    expect(JSON.stringify(lines)).not.toMatch(/ck_secret_[456]/);
    expect(lines[0]).toMatchObject({ authorization: '[redacted]', req: { method: 'GET', headers: { authorization: '[redacted]', host: 'h' } } });
    expect(fields).toEqual({ req: { method: 'GET', headers: { authorization: 'ck_secret_4', host: 'h' } }, authorization: 'ck_secret_5' });
  });

  it('keeps the level names, the time, and the fields of children', () => {
    const { lines, logger } = capture();
    logger.child({ request_id: 'r2' }).debug('detail', { n: 1 });
    expect(lines[0]).toMatchObject({ level: 'debug', msg: 'detail', request_id: 'r2', n: 1 });
    expect(Date.parse(String(lines[0]!['time']))).not.toBeNaN();
  });
});

describe('createServiceLogger', () => {
  const LOGGER = new URL('../src/logger.ts', import.meta.url).pathname;
  let directory: string;
  const opened: number[] = [];
  afterEach(() => {
    for (const fd of opened.splice(0)) fs.closeSync(fd);
    fs.rmSync(directory, { recursive: true, force: true });
  });

  function logFile(flags = 'a'): { file: string; fd: number } {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'service-log-'));
    const file = path.join(directory, 'log');
    fs.writeFileSync(file, '');
    const fd = fs.openSync(file, flags);
    opened.push(fd);
    return { file, fd };
  }

  const numbers = (file: string): number[] => fs.readFileSync(file, 'utf8').trim().split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { i: number }).i);

  it('writes every line to its descriptor, in order, off the logging call', async () => {
    const { file, fd } = logFile();
    const logger = createServiceLogger('info', { terminal: false, fd });
    for (let i = 0; i < 500; i++) logger.info('line', { i });
    await vi.waitFor(() => expect(numbers(file)).toEqual(Array.from({ length: 500 }, (_, i) => i)));
  });

  it('never throws when its descriptor refuses writes', async () => {
    const { fd } = logFile('r');
    const logger = createServiceLogger('info', { terminal: false, fd });
    expect(() => logger.error('nowhere to go')).not.toThrow();
    // The write fails on a later turn; an uncaught error there would fail this file.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(() => logger.error('still nowhere')).not.toThrow();
    // Lines reach the descriptor a few milliseconds later: let that write fail here too, before
    // afterEach closes the descriptor (its number is then reused by the next test's file).
    await new Promise((resolve) => setTimeout(resolve, 20));
  });

  it('writes what is pending when a worker thread ends', async () => {
    const { file, fd } = logFile();
    const code = `import(${JSON.stringify(LOGGER)}).then(({ createServiceLogger }) => {
      const logger = createServiceLogger('info', { terminal: false, fd: ${fd} });
      for (let i = 0; i < 500; i++) logger.info('line', { i });
      process.exit(0);
    });`;
    const worker = new Worker(code, { eval: true });
    await new Promise((resolve) => worker.once('exit', resolve));
    expect(numbers(file).sort((a, b) => a - b)).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  it('writes what is pending when the process exits', () => {
    const { file } = logFile();
    const script = `import { createServiceLogger } from ${JSON.stringify(LOGGER)};
      const logger = createServiceLogger('info', { terminal: false });
      for (let i = 0; i < 500; i++) logger.info('line', { i });
      process.exit(0);`;
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', fs.openSync(file, 'a')] });
    expect(numbers(file)).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });
});
