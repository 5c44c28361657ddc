// The storefront index as a file, so a restart (or a new instance on the same disk) loads it
// instead of reading every storefront row from the engine, then catches up through the engine's
// change feed from the position the file records.
//
// Format: 8 bytes of magic, a little-endian u32 header length, the header as JSON, then the
// index's typed arrays, each starting on an 8-byte boundary. The header names the format, the
// catalog it was taken of (the engine's identity), the change-feed position, each array's kind and
// length, the body's length and its CRC-32.
// Guarantees: a file is served only when its magic, format, lengths and CRC-32 are right, it was
// taken of this catalog, and the catalog's change feed has reached its position (a catalog
// restored from an older backup has not: its products may differ from the file's). Otherwise the
// reason is returned and the caller builds the index from the engine. A file is written to a
// temporary name and renamed, so a crash mid-write leaves the previous file or none.
// Limits: the CRC detects damage, not tampering; the file holds the whole index (about the
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

/** Writes `state` (taken at `position` of `catalog`) to `file`; the index must not change meanwhile. */
export async function writeSnapshot(file: string, catalog: string, position: StorefrontChange, state: StorefrontIndexState): Promise<void> {
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
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = await open(temporary, 'w');
  try {
    await handle.write(Buffer.concat([MAGIC, length, json, zeros.subarray(0, padding(MAGIC.length + 4 + json.length))]));
    for (const chunk of chunks) {
      for (let at = 0; at < chunk.length; at += WRITE_SLICE) await handle.write(chunk.subarray(at, at + WRITE_SLICE));
      await handle.write(zeros.subarray(0, padding(chunk.length)));
    }
    await handle.close();
    await rename(temporary, file);
  } catch (error) {
    await handle.close().catch(() => {});
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * The index in `file` and the position it was taken at, if it is whole, of `catalog`, in this
 * format, and not ahead of the catalog's last change (`lastChange`); else why not.
 */
export async function readSnapshot(file: string, catalog: string, lastChange: number): Promise<SnapshotRead> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return { rejected: 'missing', reason: `no snapshot at ${file}` };
  }
  try {
    const size = (await handle.stat()).size;
    const start = Buffer.alloc(12);
    if (size < 12 || (await handle.read(start, 0, 12, 0)).bytesRead !== 12 || !start.subarray(0, 8).equals(MAGIC)) return corrupt('not a storefront index snapshot');
    const headerBytes = start.readUInt32LE(8);
    if (12 + headerBytes > size) return corrupt('header runs past the end of the file');
    const json = Buffer.alloc(headerBytes);
    await handle.read(json, 0, headerBytes, 12);
    let header: SnapshotHeader;
    try {
      header = JSON.parse(json.toString('utf8')) as SnapshotHeader;
    } catch {
      return corrupt('header is not JSON');
    }
    if (header.format !== SNAPSHOT_FORMAT) return { rejected: 'stale', reason: `format ${String(header.format)}, this build reads ${SNAPSHOT_FORMAT}` };
    if (header.catalog !== catalog) return { rejected: 'foreign', reason: 'taken of another catalog' };
    if (header.position.change > lastChange) return { rejected: 'stale', reason: `taken at change ${header.position.change}, the catalog is at ${lastChange}` };
    const bodyStart = 12 + headerBytes + padding(12 + headerBytes);
    if (size !== bodyStart + header.bodyBytes) return corrupt(`${size} bytes, the header says ${bodyStart + header.bodyBytes}`);
    const body = new ArrayBuffer(header.bodyBytes);
    const view = new Uint8Array(body);
    for (let at = 0; at < header.bodyBytes; ) {
      const { bytesRead } = await handle.read(view, at, Math.min(64 << 20, header.bodyBytes - at), bodyStart + at);
      if (bytesRead === 0) return corrupt('file ended early');
      at += bytesRead;
    }
    if (crc32(view) !== header.crc32) return corrupt('CRC-32 does not match');
    const arrays: StorefrontIndexState['arrays'] = [];
    let at = 0;
    for (const { kind, length } of header.arrays) {
      const Kind = KINDS[kind];
      if (Kind === undefined || at + length * Kind.BYTES_PER_ELEMENT > body.byteLength) return corrupt('array table does not fit the body');
      arrays.push(new Kind(body, at, length));
      at += length * Kind.BYTES_PER_ELEMENT;
      at += padding(at);
    }
    try {
      return { index: StorefrontIndex.fromState({ ...header.state, arrays }), position: header.position };
    } catch (error) {
      return corrupt((error as Error).message);
    }
  } finally {
    await handle.close();
  }
}

function corrupt(reason: string): SnapshotRead {
  return { rejected: 'corrupt', reason };
}
