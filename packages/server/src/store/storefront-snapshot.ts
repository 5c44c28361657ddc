// The storefront index as bytes, so a restart or a new instance loads it instead of reading every
// storefront row from the engine, then catches up through the engine's change feed from the
// position the snapshot records. Where the bytes live is a SnapshotPlace: a file (snapshotFile)
// or the catalog's database (PostgreSQL: postgres-snapshot-place.ts).
//
// Format: 8 bytes of magic, a little-endian u32 header length, the header as JSON, then the
// index's typed arrays, each starting on an 8-byte boundary. The header names the format, the
// catalog it was taken of (the engine's identity), the change-feed position, each array's kind and
// length, the body's length and its CRC-32.
// Guarantees: a snapshot is served only when its magic, format, lengths and CRC-32 are right, it
// was taken of this catalog, and the catalog's change feed has reached its position (a catalog
// restored from an older backup has not: its products may differ from the snapshot's). Otherwise
// the reason is returned and the caller builds the index from the engine. A place replaces a
// snapshot in one step (a file is written to a temporary name and renamed), so a crash mid-write
// leaves the previous snapshot or none.
// Limits: the CRC detects damage, not tampering; a snapshot holds the whole index (about the
// index's memory) and is read into memory in one piece.
import { open, rename, rm, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { StorefrontIndex, type StorefrontIndexState } from '../catalog/storefront-index.ts';
import type { StorefrontChange } from './catalog-store.ts';

/** Bumped whenever the index's arrays or their order change: older files are then stale. */
export const SNAPSHOT_FORMAT = 1;
const MAGIC = Buffer.from('SFINDEX\n', 'latin1');
const KINDS = { f64: Float64Array, i32: Int32Array, u32: Uint32Array, u8: Uint8Array } as const;
type Kind = keyof typeof KINDS;

interface SnapshotHeader {
  format: number;
  catalog: string;
  position: StorefrontChange;
  state: Omit<StorefrontIndexState, 'arrays'>;
  arrays: { kind: Kind; length: number }[];
  bodyBytes: number;
  crc32: number;
}

export type SnapshotRejection = 'missing' | 'corrupt' | 'foreign' | 'stale';

export type SnapshotRead = { index: StorefrontIndex; position: StorefrontChange } | { rejected: SnapshotRejection; reason: string };

function kindOf(array: StorefrontIndexState['arrays'][number]): Kind {
  if (array instanceof Float64Array) return 'f64';
  if (array instanceof Int32Array) return 'i32';
  if (array instanceof Uint32Array) return 'u32';
  return 'u8';
}

const padding = (bytes: number): number => (8 - (bytes % 8)) % 8;
/** Bytes checksummed or written in one turn of the event loop. */
const WRITE_SLICE = 4 << 20;

/**
 * Where a catalog's snapshot is kept: a file (SQLite's default, beside the database) or the
 * catalog's own database (PostgreSQL's default: every instance reads the one snapshot). `read`
 * gives the bytes last written whole, or undefined; `write` replaces them in one step, so a reader
 * sees the previous snapshot or the new one, never a mix.
 */
export interface SnapshotPlace {
  /** Names the place in messages. */
  readonly name: string;
  read(): Promise<Uint8Array | undefined>;
  write(parts: readonly Uint8Array[]): Promise<void>;
}

/** The snapshot of `state` (taken at `position` of `catalog`) as the parts of one byte string; the index must not change meanwhile. */
export async function encodeSnapshot(catalog: string, position: StorefrontChange, state: StorefrontIndexState): Promise<Uint8Array[]> {
  const { arrays, ...rest } = state;
  const chunks = arrays.map((array) => Buffer.from(array.buffer, array.byteOffset, array.byteLength));
  let crc = 0;
  let bodyBytes = 0;
  const zeros = Buffer.alloc(8);
  for (const chunk of chunks) {
    // In slices, yielding between them: the service answers requests while a snapshot is written.
    for (let at = 0; at < chunk.length; at += WRITE_SLICE) {
      crc = crc32(chunk.subarray(at, at + WRITE_SLICE), crc);
      await new Promise((resolve) => setImmediate(resolve));
    }
    crc = crc32(zeros.subarray(0, padding(chunk.length)), crc);
    bodyBytes += chunk.length + padding(chunk.length);
  }
  const header: SnapshotHeader = { format: SNAPSHOT_FORMAT, catalog, position, state: rest, arrays: arrays.map((array) => ({ kind: kindOf(array), length: array.length })), bodyBytes, crc32: crc };
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length);
  const parts: Uint8Array[] = [Buffer.concat([MAGIC, length, json, zeros.subarray(0, padding(MAGIC.length + 4 + json.length))])];
  for (const chunk of chunks) {
    parts.push(chunk);
    if (padding(chunk.length) > 0) parts.push(zeros.subarray(0, padding(chunk.length)));
  }
  return parts;
}

/** Writes `state` (taken at `position` of `catalog`) to `place`; the index must not change meanwhile. */
export async function writeSnapshot(place: SnapshotPlace, catalog: string, position: StorefrontChange, state: StorefrontIndexState): Promise<void> {
  await place.write(await encodeSnapshot(catalog, position, state));
}

/**
 * The index in `place` and the position it was taken at, if it is whole, of `catalog`, in this
 * format, and not ahead of the catalog's last change (`lastChange`); else why not.
 */
export async function readSnapshot(place: SnapshotPlace, catalog: string, lastChange: number): Promise<SnapshotRead> {
  const bytes = await place.read();
  if (bytes === undefined) return { rejected: 'missing', reason: `no snapshot in ${place.name}` };
  return decodeSnapshot(bytes, catalog, lastChange);
}

/** The index `bytes` (as encodeSnapshot made them) hold, if sound and of `catalog` at or before `lastChange`; else why not. */
export function decodeSnapshot(bytes: Uint8Array, catalog: string, lastChange: number): SnapshotRead {
  const size = bytes.length;
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (size < 12 || !view.subarray(0, 8).equals(MAGIC)) return corrupt('not a storefront index snapshot');
  const headerBytes = view.readUInt32LE(8);
  if (12 + headerBytes > size) return corrupt('header runs past the end');
  let header: SnapshotHeader;
  try {
    header = JSON.parse(view.toString('utf8', 12, 12 + headerBytes)) as SnapshotHeader;
  } catch {
    return corrupt('header is not JSON');
  }
  if (header.format !== SNAPSHOT_FORMAT) return { rejected: 'stale', reason: `format ${String(header.format)}, this build reads ${SNAPSHOT_FORMAT}` };
  if (header.catalog !== catalog) return { rejected: 'foreign', reason: 'taken of another catalog' };
  if (header.position.change > lastChange) return { rejected: 'stale', reason: `taken at change ${header.position.change}, the catalog is at ${lastChange}` };
  const bodyStart = 12 + headerBytes + padding(12 + headerBytes);
  if (size !== bodyStart + header.bodyBytes) return corrupt(`${size} bytes, the header says ${bodyStart + header.bodyBytes}`);
  // The arrays are views of the body, which must start on an 8-byte boundary of its buffer.
  const body = (bytes.byteOffset + bodyStart) % 8 === 0 ? new Uint8Array(bytes.buffer, bytes.byteOffset + bodyStart, header.bodyBytes) : bytes.slice(bodyStart);
  if (crc32(body) !== header.crc32) return corrupt('CRC-32 does not match');
  const arrays: StorefrontIndexState['arrays'] = [];
  let at = 0;
  for (const { kind, length } of header.arrays) {
    const Kind = KINDS[kind];
    if (Kind === undefined || at + length * Kind.BYTES_PER_ELEMENT > body.byteLength) return corrupt('array table does not fit the body');
    arrays.push(new Kind(body.buffer as ArrayBuffer, body.byteOffset + at, length));
    at += length * Kind.BYTES_PER_ELEMENT;
    at += padding(at);
  }
  try {
    return { index: StorefrontIndex.fromState({ ...header.state, arrays }), position: header.position };
  } catch (error) {
    return corrupt((error as Error).message);
  }
}

/** A snapshot kept in a file, written to a temporary name and renamed. */
export function snapshotFile(file: string): SnapshotPlace {
  return {
    name: file,
    async read() {
      let handle;
      try {
        handle = await open(file, 'r');
      } catch {
        return undefined;
      }
      try {
        const size = (await handle.stat()).size;
        const bytes = new Uint8Array(size);
        for (let at = 0; at < size; ) {
          const { bytesRead } = await handle.read(bytes, at, Math.min(64 << 20, size - at), at);
          if (bytesRead === 0) return bytes.subarray(0, at);
          at += bytesRead;
        }
        return bytes;
      } finally {
        await handle.close();
      }
    },
    async write(parts) {
      await mkdir(dirname(file), { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      const handle = await open(temporary, 'w');
      try {
        for (const part of parts) {
          for (let at = 0; at < part.length; at += WRITE_SLICE) await handle.write(part.subarray(at, at + WRITE_SLICE));
        }
        await handle.close();
        await rename(temporary, file);
      } catch (error) {
        await handle.close().catch(() => {});
        await rm(temporary, { force: true });
        throw error;
      }
    },
  };
}

function corrupt(reason: string): SnapshotRead {
  return { rejected: 'corrupt', reason };
}
