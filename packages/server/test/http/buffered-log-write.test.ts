import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBufferedLogWrite } from '../../src/http/buffered-log-write.ts';

describe('createBufferedLogWrite', () => {
  let directory: string;
  let fd: number;
  afterEach(() => {
    fs.closeSync(fd);
    fs.rmSync(directory, { recursive: true, force: true });
  });

  function open(): string {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'log-write-'));
    const file = path.join(directory, 'log');
    fd = fs.openSync(file, 'a');
    return file;
  }

  it('writes the lines of one event-loop turn together, in order', async () => {
    const file = open();
    const write = createBufferedLogWrite(fd);
    write('{"n":1}\n');
    write('{"n":2}\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('');
    await new Promise((resolve) => setImmediate(resolve));
    expect(fs.readFileSync(file, 'utf8')).toBe('{"n":1}\n{"n":2}\n');
  });

  it('writes the lines of each later turn once, when that turn ends', async () => {
    const file = open();
    const write = createBufferedLogWrite(fd);
    write('{"n":1}\n');
    await new Promise((resolve) => setImmediate(resolve));
    write('{"n":2}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(fs.readFileSync(file, 'utf8')).toBe('{"n":1}\n{"n":2}\n');
  });

  it('writes what is pending when the process exits', () => {
    const file = open();
    const before = new Set(process.rawListeners('exit'));
    const write = createBufferedLogWrite(fd);
    write('{"n":1}\n');
    // The process's exit, to this writer: its own listener, not the test runner's.
    for (const listener of process.rawListeners('exit').filter((one) => !before.has(one))) (listener as () => void)();
    expect(fs.readFileSync(file, 'utf8')).toBe('{"n":1}\n');
  });

  it('writes at once when 64 KiB are pending', () => {
    const file = open();
    const write = createBufferedLogWrite(fd);
    const line = `${'x'.repeat(1023)}\n`;
    for (let i = 0; i < 64; i++) write(line);
    expect(fs.readFileSync(file, 'utf8')).toHaveLength(64 * 1024);
  });
});
