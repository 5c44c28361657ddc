// Shared pieces of the data commands: the database flag and progress lines on a terminal.
import type { CatalogStore } from '../catalog/catalog-store.ts';

/** Rewrites one status line on stderr when it is a terminal, at most ~10 times a second. */
export function createProgress(enabled = process.stderr.isTTY): { update(line: string): void; done(): void } {
  let last = 0;
  let shown = false;
  return {
    update(line) {
      const now = Date.now();
      if (!enabled || now - last < 100) return;
      last = now;
      shown = true;
      process.stderr.write(`\r\x1b[2K${line}`);
    },
    done() {
      if (shown) process.stderr.write('\r\x1b[2K');
    },
  };
}

/**
 * Lets an engine that can skip index upkeep during a bulk load do so (both can);
 * `optimizeAfterBulkLoad` must follow, or searches stay slow until it does.
 */
export async function deferIndexesForBulkLoad(catalog: CatalogStore): Promise<void> {
  await catalog.bulkLoading?.deferIndexes();
}

/** Lets the engine rebuild deferred indexes and refresh the others after a bulk load. */
export async function optimizeAfterBulkLoad(catalog: CatalogStore): Promise<void> {
  await catalog.bulkLoading?.optimize();
}

/**
 * After storefront products were loaded: loads the storefront index and writes its snapshot where
 * `catalog serve` looks by default (beside a SQLite catalog, in a PostgreSQL database), so the next
 * start, and every new instance, loads the snapshot instead of every row. Nothing is written for a
 * catalog too small to need one or when the snapshot already on hand is current.
 */
export async function writeIndexSnapshot(catalog: CatalogStore, progress: (line: string) => void): Promise<void> {
  progress('writing the storefront index snapshot');
  await catalog.warm?.({ untilSnapshotWritten: true });
}
