// The open-file limit as the service reads and raises it at start, in this process: the limits file
// is a temporary file standing in for /proc/self/limits, and `prlimit` is a recorded call that
// changes that file the way the kernel would.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { capsNotice, connectionCaps, DESCRIPTOR_RESERVE, fitConnectionCaps, MIN_OPEN_FILES, raiseOpenFileLimit } from '../../src/http/listener-limits.ts';
import { createLogger } from '../../src/logger.ts';

const system = vi.hoisted(() => ({ limitsFile: '', prlimit: (_args: readonly string[]): void => {} }));

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const readFileSync = ((file: fs.PathOrFileDescriptor, ...rest: unknown[]) =>
    (real.readFileSync as (...args: unknown[]) => unknown)(file === '/proc/self/limits' ? system.limitsFile : file, ...rest)) as typeof real.readFileSync;
  return { ...real, default: { ...real, readFileSync }, readFileSync };
});

const execFileSync = vi.hoisted(() => vi.fn());
vi.mock('node:child_process', async (importOriginal) => ({ ...(await importOriginal<typeof import('node:child_process')>()), execFileSync }));

let directory: string;
beforeEach(() => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'limits-'));
  system.limitsFile = path.join(directory, 'limits');
  execFileSync.mockReset();
  execFileSync.mockImplementation((_file: string, args: readonly string[]) => system.prlimit(args));
});
afterEach(() => fs.rmSync(directory, { recursive: true, force: true }));

/** The limits file as Linux prints it, with the open-file limits given (undefined: no such line). */
function limitsAre(openFiles: { soft: string; hard: string } | undefined): void {
  const rows = ['Limit                     Soft Limit           Hard Limit           Units     ', 'Max cpu time              unlimited            unlimited            seconds   '];
  if (openFiles !== undefined) rows.push(`Max open files            ${openFiles.soft.padEnd(21)}${openFiles.hard.padEnd(21)}files     `);
  rows.push('Max locked memory         8388608              8388608              bytes     ');
  fs.writeFileSync(system.limitsFile, `${rows.join('\n')}\n`);
}

/** `prlimit --nofile=soft:hard` as the kernel answers it: the limits file changes. */
function prlimitSucceeds(): void {
  system.prlimit = (args) => {
    const [soft = '', hard = ''] = (args.at(-1) ?? '').replace('--nofile=', '').split(':');
    limitsAre({ soft, hard });
  };
}

function recordingLogger(): { logger: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { logger: createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }), lines };
}

describe('raiseOpenFileLimit', () => {
  it('raises the soft limit to the hard limit with prlimit, quietly, and logs from what to what', () => {
    limitsAre({ soft: '1024', hard: '4096' });
    prlimitSucceeds();
    const { logger, lines } = recordingLogger();
    raiseOpenFileLimit(logger);
    // prlimit's own complaints must not reach the service's stderr (the JSON log), nor may it hang the start.
    expect(execFileSync).toHaveBeenCalledExactlyOnceWith('prlimit', ['--pid', String(process.pid), '--nofile=4096:4096'], { stdio: 'ignore', timeout: 5_000 });
    expect(lines).toMatchObject([{ level: 'info', msg: 'open-file limit raised', from: 1024, to: 4096 }]);
  });

  it('raises it to unlimited when the hard limit is unlimited', () => {
    limitsAre({ soft: '1024', hard: 'unlimited' });
    prlimitSucceeds();
    const { logger, lines } = recordingLogger();
    raiseOpenFileLimit(logger);
    expect(execFileSync).toHaveBeenCalledWith('prlimit', ['--pid', String(process.pid), '--nofile=unlimited:unlimited'], expect.anything());
    expect(lines).toMatchObject([{ msg: 'open-file limit raised', from: 1024, to: 'unlimited' }]);
  });

  it('logs at info, and goes on, when prlimit is missing or refused', () => {
    limitsAre({ soft: '1024', hard: '4096' });
    system.prlimit = () => {
      throw new Error('spawnSync prlimit ENOENT');
    };
    const { logger, lines } = recordingLogger();
    raiseOpenFileLimit(logger);
    expect(lines).toMatchObject([{ level: 'info', msg: 'could not raise the open-file limit', soft: 1024, hard: '4096', error: 'spawnSync prlimit ENOENT' }]);
  });

  it.each([
    ['the soft limit is the hard limit', { soft: '4096', hard: '4096' }],
    ['both are unlimited', { soft: 'unlimited', hard: 'unlimited' }],
    ['the system has no open-file line', undefined],
  ])('does nothing when %s', (_case, openFiles) => {
    limitsAre(openFiles);
    const { logger, lines } = recordingLogger();
    raiseOpenFileLimit(logger);
    expect(execFileSync).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });

  it('does nothing where there is no /proc (not Linux)', () => {
    const { logger, lines } = recordingLogger();
    raiseOpenFileLimit(logger);
    expect(execFileSync).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });
});

describe('connectionCaps', () => {
  it('fits the caps to the soft open-file limit the system reports', () => {
    limitsAre({ soft: '456', hard: '4096' });
    expect(connectionCaps({ api: 100, stream: 300 })).toEqual({ api: 50, stream: 150, limit: 456 });
  });

  it('keeps the configured caps where the system does not tell the limit, or says unlimited', () => {
    expect(connectionCaps({ api: 100, stream: 300 })).toEqual({ api: 100, stream: 300, limit: undefined });
    limitsAre({ soft: 'unlimited', hard: 'unlimited' });
    expect(connectionCaps({ api: 100, stream: 300 })).toEqual({ api: 100, stream: 300, limit: undefined });
  });

  it('scales down caps that do not leave the whole reserve free', () => {
    expect(connectionCaps({ api: 100, stream: 100 }, 200 + DESCRIPTOR_RESERVE)).toEqual({ api: 100, stream: 100, limit: 456 });
    expect(connectionCaps({ api: 100, stream: 100 }, 300)).toEqual({ api: 22, stream: 22, limit: 300 });
  });
});

describe('capsNotice', () => {
  it('says nothing when the caps are the configured ones', () => {
    expect(capsNotice({ api: 100, stream: 300 }, { api: 100, stream: 300, limit: 456 })).toBeNull();
  });

  it('warns, saying how to raise the limit, when it is below what the service needs, even if one cap is kept', () => {
    const wanted = { api: 1, stream: 1000 };
    const caps = connectionCaps(wanted, 300);
    expect(caps).toMatchObject({ api: 1, stream: 43 });
    expect(capsNotice(wanted, caps)).toEqual({
      level: 'warn',
      message: `open-file limit 300 is below the ${MIN_OPEN_FILES} the service needs; raise it (ulimit -n 1257, or LimitNOFILE= under systemd) or the listeners refuse connections early`,
      fields: { open_file_limit: 300, api: 1, stream: 43, needed_for_configured_caps: 1257 },
    });
  });

  it('warns when only the API cap is scaled down, the stream cap being at its least already', () => {
    const wanted = { api: 1000, stream: 1 };
    expect(capsNotice(wanted, connectionCaps(wanted, 300))).toMatchObject({ level: 'warn', fields: { api: 43, stream: 1 } });
  });

  it('informs when caps are scaled down to a limit the service can run with', () => {
    const wanted = { api: 4096, stream: 16384 };
    const caps = connectionCaps(wanted, MIN_OPEN_FILES);
    expect(capsNotice(wanted, caps)).toEqual({
      level: 'info',
      message: 'connection caps fitted to the open-file limit',
      fields: { open_file_limit: MIN_OPEN_FILES, api: caps.api, stream: caps.stream, needed_for_configured_caps: 4096 + 16384 + DESCRIPTOR_RESERVE },
    });
  });
});

describe('fitConnectionCaps', () => {
  it('raises the limit first, then fits the caps to the raised limit and logs them', () => {
    limitsAre({ soft: '1024', hard: '2256' });
    prlimitSucceeds();
    const { logger, lines } = recordingLogger();
    expect(fitConnectionCaps({ api: 1000, stream: 3000 }, logger)).toEqual({ api: 500, stream: 1500, limit: 2256 });
    expect(lines).toMatchObject([
      { level: 'info', msg: 'open-file limit raised', from: 1024, to: 2256 },
      { level: 'info', msg: 'connection caps fitted to the open-file limit', open_file_limit: 2256, api: 500, stream: 1500 },
    ]);
  });

  it('logs nothing about caps that fit', () => {
    limitsAre({ soft: '4096', hard: '4096' });
    const { logger, lines } = recordingLogger();
    expect(fitConnectionCaps({ api: 100, stream: 300 }, logger)).toMatchObject({ api: 100, stream: 300 });
    expect(lines).toEqual([]);
  });
});
