// Where PostgresCatalogStore keeps the storefront index's snapshot: the storefront_index_snapshot
// table (migration 9), in parts of SNAPSHOT_PART_BYTES, read back through COPY's binary format.
//
// Guarantees: a write replaces the snapshot in one transaction (concurrent writers queue on an
// advisory lock; the last one's stays); a read is one REPEATABLE READ transaction, so it sees one
// snapshot whole, its bytes as written.
// Failure modes: a stream that is not binary COPY, or holds more than the size read, throws; engine
// errors propagate through `run` (the store's outage mapping).
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { SnapshotPlace } from '../storefront-snapshot.ts';
import { LONG_STATEMENT } from './migrations.ts';
import { inTransaction } from './pg-pool.ts';

const SNAPSHOT_WRITE_LOCK = 'catalog.storefront_snapshot';
/** Bytes per row of storefront_index_snapshot: well under bytea's 1 GB, few rows per snapshot. */
const SNAPSHOT_PART_BYTES = 16 << 20;

/**
 * The storefront index snapshot of `catalog`, kept in this database (migration 9) so that every
 * instance loads the one an instance, an import or a seed wrote. A write replaces the snapshot
 * in one transaction (concurrent writers queue on an advisory lock; the last one's stays); a
 * read is one statement, so it sees one snapshot whole.
 */
export function storefrontSnapshotPlace(pool: pg.Pool, run: <T>(work: () => Promise<T>) => Promise<T>, catalog: string): SnapshotPlace {
  return {
    name: 'the storefront_index_snapshot table',
    read: () =>
      run(() =>
        inTransaction(pool, async (client) => {
          // One snapshot of the table for both statements: the size read is the size copied.
          await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
          await client.query('SET LOCAL statement_timeout = 0');
          const { rows } = await client.query<{ bytes: string | null }>('SELECT sum(length(bytes))::text AS bytes FROM storefront_index_snapshot WHERE catalog = $1', [catalog]);
          if (rows[0]?.bytes == null) return undefined;
          const snapshot = new Uint8Array(Number(rows[0].bytes));
          // COPY's binary format brings the bytes as stored, straight into one buffer (a SELECT
          // would bring them as hex text, twice the size, then a copy of each part).
          const copied = await copyBinaryField(
            client.query(copyTo(`COPY (SELECT bytes FROM storefront_index_snapshot WHERE catalog = ${client.escapeLiteral(catalog)} ORDER BY part) TO STDOUT (FORMAT binary)`)),
            snapshot,
          );
          return copied === snapshot.length ? snapshot : snapshot.subarray(0, copied);
        }),
      ),
    write: (parts) =>
      run(() =>
        inTransaction(pool, async (client) => {
          await client.query('SET LOCAL statement_timeout = 0');
          await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [SNAPSHOT_WRITE_LOCK]);
          // Only the latest snapshot is ever read: those of earlier identities go too.
          await client.query('DELETE FROM storefront_index_snapshot');
          let part = 0;
          for (const slab of slabs(parts, SNAPSHOT_PART_BYTES)) {
            await client.query({ text: 'INSERT INTO storefront_index_snapshot (catalog, part, bytes) VALUES ($1, $2, $3)', values: [catalog, part, slab], ...LONG_STATEMENT });
            part += 1;
          }
        }),
      ),
  };
}

/**
 * Copies the one column of every row of a `COPY … TO STDOUT (FORMAT binary)` stream, one row after
 * another, into `target`; returns the bytes copied. Throws when the stream is not that format or
 * holds more than `target` takes.
 */
async function copyBinaryField(stream: AsyncIterable<Buffer>, target: Uint8Array): Promise<number> {
  // The format: an 11-byte signature, flags (4 bytes), an extension's length (4) and the
  // extension; per row a field count (2; -1 ends the data), per field a length (4) and its bytes.
  let state: 'header' | 'row' | 'length' | 'field' | 'end' = 'header';
  let pending: Buffer = Buffer.alloc(0);
  let left = 0;
  let at = 0;
  for await (const chunk of stream) {
    const input = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let i = 0;
    for (let more = true; more; ) {
      const available = input.length - i;
      switch (state) {
        case 'field': {
          const taken = Math.min(left, available);
          target.set(input.subarray(i, i + taken), at);
          at += taken;
          i += taken;
          left -= taken;
          if (left === 0) state = 'row';
          else more = false;
          break;
        }
        case 'header':
          if (available < 19 || available < 19 + input.readInt32BE(i + 15)) {
            more = false;
          } else {
            if (!input.subarray(i, i + 11).equals(COPY_SIGNATURE)) throw new Error('not a binary COPY stream');
            i += 19 + input.readInt32BE(i + 15);
            state = 'row';
          }
          break;
        case 'row':
          if (available < 2) {
            more = false;
          } else {
            const fields = input.readInt16BE(i);
            i += 2;
            if (fields === -1) state = 'end';
            else if (fields !== 1) throw new Error(`binary COPY row of ${fields} fields, expected 1`);
            else state = 'length';
          }
          break;
        case 'length':
          if (available < 4) {
            more = false;
          } else {
            left = input.readInt32BE(i);
            i += 4;
            if (left < 0 || at + left > target.length) throw new Error('binary COPY field is null or larger than announced');
            state = 'field';
          }
          break;
        case 'end':
          more = false;
          break;
      }
    }
    pending = input.subarray(i);
  }
  if (state !== 'end') throw new Error('binary COPY stream ended early');
  return at;
}
const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** `parts` regrouped into buffers of `size` bytes (the last one shorter). */
function* slabs(parts: readonly Uint8Array[], size: number): Generator<Buffer> {
  let slab = Buffer.allocUnsafe(size);
  let filled = 0;
  for (const part of parts) {
    for (let at = 0; at < part.length; ) {
      const taken = Math.min(size - filled, part.length - at);
      slab.set(part.subarray(at, at + taken), filled);
      filled += taken;
      at += taken;
      if (filled === size) {
        yield slab;
        slab = Buffer.allocUnsafe(size);
        filled = 0;
      }
    }
  }
  if (filled > 0) yield slab.subarray(0, filled);
}
