// `catalog import --db <url> --kind catalog|storefront FILE...`: upserts NDJSON products by `id`.
// Each line is read by ndjson-lines.ts (size, UTF-8, depth and number limits) and validated
// against the contract's schema; a bad line is reported as FILE:LINE and skipped while every valid
// line is kept, including the other lines of a batch the store refused. Lines are read as a stream and written in batched
// transactions, so memory stays flat however large the files. Exit status 1 when any line was bad.
// A full storage (store/storage-full.ts) stops the import at the first write it refuses, with one
// message naming the disk and the line reached: reading stops too (at most one batch is read
// ahead), and what was written before stays (batches are transactions; the import upserts by id,
// so running it again once there is room finishes it).
import { stat } from 'node:fs/promises';
import type { CatalogProductPro, StorefrontProductInput } from '../catalog/model.ts';
import { ServiceUnavailable } from '../catalog/errors.ts';
import { silentLogger } from '../logger.ts';
import type { CatalogStore } from '../catalog/catalog-store.ts';
import { openCatalogStores, type CatalogStores } from '../store/open-store.ts';
import { storageFullError } from '../store/storage-full.ts';
import { sqlitePath } from '../storage-url.ts';
import { createProgress, deferIndexesForBulkLoad, optimizeAfterBulkLoad, writeIndexSnapshot } from './cli-support.ts';
import { commandSpec, parseCommand } from './command-line.ts';
import { databaseUrlOf } from '../settings.ts';
import { readNdjson } from './ndjson-lines.ts';
import { describeViolation, importValidators, type ImportKind } from './resource-validators.ts';

/** Products per transaction: large enough to amortise commits, small enough to keep readers responsive. */
const BATCH_PRODUCTS = 2_000;
/**
 * Catalog files at least this large (about 40,000 variants) into an empty catalog load with the
 * search indexes deferred and rebuilt at the end in one sorted pass: cheaper than a random index
 * insert per GTIN suffix. Other imports keep the indexes live throughout.
 */
const BULK_LOAD_BYTES = 32 * 1024 * 1024;

interface Totals {
  lines: number;
  bad: number;
  inserted: number;
  updated: number;
  variants: number;
}

export interface ImportDeps {
  /** Opens the stores a database URL names; tests pass stores with a size limit. */
  openStores: (url: string) => Promise<CatalogStores>;
}

/** The write that stopped the import: the storage is full. */
class ImportStopped extends Error {
  readonly file: string;
  readonly line: number;
  constructor(file: string, line: number, reason: Error) {
    super(reason.message, { cause: reason });
    this.file = file;
    this.line = line;
  }
}

export async function run(args: string[], deps: ImportDeps = { openStores: (url) => openCatalogStores(url, silentLogger, { indexSnapshotDir: 'default' }) }): Promise<number> {
  const parsed = parseCommand(commandSpec('import'), args);
  if ('exit' in parsed) return parsed.exit;
  const kindValue = parsed.values['kind'];
  if (kindValue !== 'catalog' && kindValue !== 'storefront') {
    process.stderr.write('--kind must be catalog or storefront (run with --help for the options)\n');
    return 2;
  }
  const kind: ImportKind = kindValue;
  const db = databaseUrlOf(parsed.values);
  const files = parsed.positionals;
  let bytes = 0;
  for (const file of files) {
    try {
      const info = await stat(file);
      if (!info.isFile()) throw new Error('not a file');
      bytes += info.size;
    } catch {
      process.stderr.write(`${file}: cannot read the file\n`);
      return 1;
    }
  }

  const started = performance.now();
  const stores = await deps.openStores(db);
  const totals: Totals = { lines: 0, bad: 0, inserted: 0, updated: 0, variants: 0 };
  const progress = createProgress();
  const databaseFile = db.startsWith('sqlite:') ? sqlitePath(db) : undefined;
  let stopped: ImportStopped | undefined;
  try {
    if (kind === 'catalog' && bytes >= BULK_LOAD_BYTES) await deferIndexesForBulkLoad(stores.catalog);
    for (const file of files) await importFile(stores.catalog, kind, file, totals, progress.update, databaseFile);
    progress.update('rebuilding and optimizing search indexes');
    await optimizeAfterBulkLoad(stores.catalog);
    if (kind === 'storefront') await writeIndexSnapshot(stores.catalog, progress.update);
  } catch (error) {
    if (!(error instanceof ImportStopped)) throw error;
    stopped = error;
  } finally {
    progress.done();
    await stores.close();
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (stopped !== undefined) {
    process.stderr.write(
      `${stopped.file}:${stopped.line}: import stopped: ${stopped.message} The products before this line are imported; run the import again to finish (it upserts by id).\n`,
    );
  }
  process.stdout.write(
    `imported ${totals.inserted + totals.updated} ${kind} products (${totals.inserted} new, ${totals.updated} updated, ${totals.variants} variants) from ${files.length} file(s) in ${seconds}s; ${totals.bad} bad line(s)${stopped === undefined ? '' : '; stopped early: storage full'}\n`,
  );
  return totals.bad > 0 || stopped !== undefined ? 1 : 0;
}

async function importFile(
  catalog: CatalogStore,
  kind: ImportKind,
  file: string,
  totals: Totals,
  progress: (line: string) => void,
  databaseFile: string | undefined,
): Promise<void> {
  const validate = importValidators()[kind];
  /** Throws ImportStopped when `error` says the storage is full: nothing later can be written either. */
  const stopIfFull = (error: unknown, line: number): void => {
    const full = storageFullError('catalog database', databaseFile, error);
    if (full !== null) throw new ImportStopped(file, line, full);
  };
  let batch: { line: number; product: unknown }[] = [];
  const upsert = (products: unknown[]) =>
    kind === 'catalog'
      ? catalog.upsertCatalogProducts(products as CatalogProductPro[])
      : catalog.upsertStorefrontProducts(products as StorefrontProductInput[]);
  const write = async (lines: { line: number; product: unknown }[]): Promise<void> => {
    try {
      const result = await upsert(lines.map((entry) => entry.product));
      totals.inserted += result.inserted;
      totals.updated += result.updated;
      for (const entry of lines) totals.variants += variantsOf(entry.product);
    } catch (error) {
      stopIfFull(error, lines[0]!.line);
      if (isUnavailable(error)) throw error;
      // One product the store refused must not cost the others of its batch: retry them one by
      // one, so only the refused lines are reported and skipped.
      for (const entry of lines) {
        try {
          const result = await upsert([entry.product]);
          totals.inserted += result.inserted;
          totals.updated += result.updated;
          totals.variants += variantsOf(entry.product);
        } catch (lineError) {
          stopIfFull(lineError, entry.line);
          if (isUnavailable(lineError)) throw lineError;
          report(file, entry.line, `the store refused the product (${lineError instanceof Error ? lineError.message : String(lineError)})`);
          totals.bad += 1;
        }
      }
    }
    progress(`${file}: ${totals.lines} lines, ${totals.inserted + totals.updated} products, ${totals.variants} variants, ${totals.bad} bad`);
  };
  // One batch is written while the next is read and validated (an engine that answers over the
  // network, PostgreSQL, works meanwhile); batches start in file order, one at a time, so later
  // lines still win.
  let writing: Promise<void> = Promise.resolve();
  let writeFailed = false;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const lines = batch;
    batch = [];
    await writing;
    const pending = write(lines);
    // Awaited before the next batch starts (or at the end); this only keeps a failure meanwhile
    // from counting as unhandled.
    pending.catch(() => {
      writeFailed = true;
    });
    writing = pending;
  };
  for await (const entry of readNdjson(file)) {
    // A failed write stops the reading at once (the failure is thrown below).
    if (writeFailed) break;
    totals.lines += 1;
    if ('problem' in entry) {
      report(file, entry.line, entry.problem);
      totals.bad += 1;
      continue;
    }
    if (!validate(entry.value)) {
      report(file, entry.line, describeViolation(validate.errors));
      totals.bad += 1;
      continue;
    }
    batch.push({ line: entry.line, product: entry.value });
    if (batch.length >= BATCH_PRODUCTS) await flush();
  }
  await flush();
  await writing;
}

function variantsOf(product: unknown): number {
  return (product as { variants?: unknown[] }).variants?.length ?? 0;
}

function isUnavailable(error: unknown): boolean {
  return error instanceof ServiceUnavailable;
}

function report(file: string, line: number, problem: string): void {
  process.stderr.write(`${file}:${line}: ${problem}\n`);
}
