// One rule for "the storage is full", for every engine and file the service writes: SQLite's
// SQLITE_FULL (a full disk, or the database at its max_page_count), ENOSPC from the file system,
// and PostgreSQL's disk_full (53100). A write that fails so fails again until space is freed, so
// callers stop at the first one (an import stops reading) and say once which disk is full, rather
// than retry or report it per line.
//
// Limits: the disk is named by the mount point of the file's directory (Linux /proc/self/mountinfo)
// and its free bytes (statfs); elsewhere only the file is named. A PostgreSQL server's disk is not
// visible from here: it is named as the server's.
import { readFileSync, realpathSync, statfsSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { StorageFull } from '../catalog/errors.ts';

const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
/** Free space below which a disk counts as full when SQLite reports only an I/O error. */
const NEARLY_FULL_BYTES = 1024 * 1024;

/**
 * Whether `error`, or an error it was caused by, says the storage is full. SQLite reports some
 * full-disk failures (growing the WAL index, `-shm`) as a plain I/O error: such an error counts
 * when `file`'s disk has less than NEARLY_FULL_BYTES free.
 */
export function isStorageFull(error: unknown, file?: string): boolean {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof StorageFull) return true;
    const { code, errcode } = cause as { code?: unknown; errcode?: unknown };
    if (typeof errcode === 'number' && (errcode & 0xff) === SQLITE_FULL) return true;
    if (code === 'ENOSPC' || code === '53100' || code === 'SQLITE_FULL') return true;
    if (typeof errcode === 'number' && (errcode & 0xff) === SQLITE_IOERR && file !== undefined) {
      const free = freeBytes(file);
      if (free !== undefined && free < NEARLY_FULL_BYTES) return true;
    }
  }
  return false;
}

function freeBytes(file: string): number | undefined {
  try {
    const stats = statfsSync(dirname(resolve(file)));
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}

/**
 * The StorageFull error for a failed write of `what` (e.g. "catalog database") stored at `file`
 * (a path; undefined for a PostgreSQL server), or null when `error` is not about a full storage.
 */
export function storageFullError(what: string, file: string | undefined, error: unknown): StorageFull | null {
  if (!isStorageFull(error, file)) return null;
  if (error instanceof StorageFull) return error;
  return new StorageFull(what, file === undefined ? "the database server's disk" : diskOf(file), { cause: error });
}

/** "the disk mounted at /data (12 KiB free), holding /data/catalog.db" or as much of it as is known. */
export function diskOf(file: string): string {
  const path = resolve(file);
  let directory = dirname(path);
  try {
    directory = realpathSync(directory);
  } catch {
    // A directory that cannot be resolved is named as given.
  }
  const mount = mountPointOf(directory);
  const bytes = freeBytes(path);
  const free = bytes === undefined ? '' : `, ${formatBytes(bytes)} free`;
  return mount === undefined ? `the disk holding ${path}${free === '' ? '' : ` (${free.slice(2)})`}` : `the disk mounted at ${mount} (${free.slice(2) || 'free space unknown'}), holding ${path}`;
}

function mountPointOf(directory: string): string | undefined {
  let table: string;
  try {
    table = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return undefined;
  }
  let best: string | undefined;
  for (const line of table.split('\n')) {
    // Field 5 is the mount point, with spaces and the like written as octal escapes.
    const point = line.split(' ')[4]?.replace(/\\([0-7]{3})/gu, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
    if (point === undefined) continue;
    const within = point === '/' || directory === point || directory.startsWith(point.endsWith(sep) ? point : `${point}${sep}`);
    if (within && (best === undefined || point.length > best.length)) best = point;
  }
  return best;
}

function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}
