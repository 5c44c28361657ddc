// `catalog prices publish|simulate`: feeds the price log from another process; a running stream
// server delivers what is appended here to its subscribers.
//
//   prices publish [--price-log <url>] [--retry-for-ms MS] FILE|-
//                                                   NDJSON PriceEvents; bad lines are reported
//                                                   (with line numbers) and skipped; exit 1 if any
//   prices simulate --rate R [--price-log <url>] [--db <url>] [--variants N]
//
// Lines are appended exactly as written (the stream sends them byte for byte), in batches: a batch
// is committed when it holds BATCH_LINES lines, or once the lines that arrived together have been
// read (the end of that turn of the event loop), so a line-at-a-time writer waits for no timer and
// a fast one still gets batches; lines that arrive while a batch is being committed form the next.
//
// A batch the price log refuses (Redis restarting, a full disk) is tried again with backoff, in
// order (the next batch waits), for up to --retry-for-ms; one that still fails is reported on
// stderr at once, by line numbers, and the publisher goes on with the next batch, so nothing that
// arrives once the log is back is lost; the exit status is then 1. A retried append that Redis
// had applied before its reply was lost stores those events twice (see redis-price-log.ts).
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createContractAjv } from '@catalog/contract/ajv';
import type { ErrorObject } from 'ajv';
import type { CatalogVariant } from '../catalog/model.ts';
import { ConfigError } from '../config.ts';
import { commandSpec, parseCommand } from './command-line.ts';
import { openapiDocument } from '@catalog/contract/documents';
import { createLogger } from '../logger.ts';
import { openPriceLog } from '../prices/open-price-log.ts';
import { runSimulator, syntheticVariants, type SimulatedVariant } from '../prices/simulator.ts';
import { numericValue, priceLogUrlOf, PRICES_PUBLISH_SETTINGS, PRICES_SIMULATE_SETTINGS, type SettingValues } from '../settings.ts';

const BATCH_LINES = 500;
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2_000;

const USAGE = `usage: catalog prices <publish|simulate> [options]

${['publish', 'simulate'].map((name) => `  ${name.padEnd(9)} ${commandSpec(`prices ${name}`).summary}`).join('\n')}
`;

export interface PricesCommandDeps {
  /** Real catalog variants for the simulator; without it synthetic variants are used. */
  sampleVariants?: (databaseUrl: string, limit: number) => Promise<CatalogVariant[]>;
}

/** Variants from the catalog a `--db` URL names, for the simulator. */
async function catalogVariants(databaseUrl: string, limit: number): Promise<CatalogVariant[]> {
  const { openCatalogStores } = await import('../store/open-store.ts');
  const stores = await openCatalogStores(databaseUrl, createLogger({ level: 'warn' }));
  try {
    return await stores.catalog.sampleVariants(limit);
  } finally {
    await stores.close();
  }
}

export async function run(args: string[], deps: PricesCommandDeps = { sampleVariants: catalogVariants }): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'publish':
      return publish(rest);
    case 'simulate':
      return simulate(rest, deps);
    case undefined:
      process.stderr.write(USAGE);
      return 2;
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`unknown prices command "${sub}"\n\n${USAGE}`);
      return 2;
  }
}

/** The price log by the one default chain (command-line.ts); PostgreSQL catalogs need one named. */
function priceLogUrl(values: SettingValues): string {
  const url = priceLogUrlOf(values);
  if (url === undefined) throw new ConfigError('--price-log (or PRICE_LOG_URL) is required when the catalog is not SQLite');
  return url;
}

/** A validator for one NDJSON line against the contract's PriceEvent schema. */
export function createPriceEventValidator(): (line: string) => string | null {
  const components = (openapiDocument['components'] as { schemas: Record<string, unknown> }).schemas;
  const ajv = createContractAjv({ allErrors: false });
  const validate = ajv.compile(components['PriceEvent'] as object);
  return (line) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      return `not valid JSON (${error instanceof Error ? error.message : String(error)})`;
    }
    if (validate(value)) return null;
    return describe(validate.errors?.[0]);
  };
}

function describe(error: ErrorObject | undefined): string {
  if (error === undefined) return 'not a PriceEvent';
  const where = error.instancePath === '' ? 'the event' : `"${error.instancePath.slice(1)}"`;
  if (error.keyword === 'additionalProperties') {
    return `${where} has an unknown field "${String((error.params as { additionalProperty: string }).additionalProperty)}"`;
  }
  return `${where} ${error.message ?? 'is invalid'}`;
}

function openInput(file: string): NodeJS.ReadableStream {
  if (file === '-') return process.stdin;
  // `pnpm catalog` runs in packages/server; a relative path may be meant from where pnpm was run.
  const initCwd = process.env['INIT_CWD'];
  const resolved = !fs.existsSync(file) && initCwd !== undefined && !path.isAbsolute(file) ? path.resolve(initCwd, file) : file;
  return fs.createReadStream(resolved);
}

async function publish(args: string[]): Promise<number> {
  const parsed = parseCommand(commandSpec('prices publish'), args);
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  const file = parsed.positionals[0]!;
  const input = openInput(file);
  const opened = new Promise<void>((resolve, reject) => {
    if (file === '-') resolve();
    input.once('error', reject);
    input.once('open', () => resolve());
  });
  await opened;
  const logger = createLogger({ level: 'warn' });
  const log = await openPriceLog(priceLogUrl(values), logger);
  const validate = createPriceEventValidator();
  let retryForMs: number;
  try {
    retryForMs = numericValue('retry-for-ms', PRICES_PUBLISH_SETTINGS['retry-for-ms'], values['retry-for-ms'] as string | undefined)!;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    await log.close();
    return 2;
  }
  let published = 0;
  let bad = 0;
  let lost = 0;
  let firstId: number | null = null;
  let lastId: number | null = null;
  let batch: string[] = [];
  let batchLines = { first: 0, last: 0 };
  let timer: NodeJS.Immediate | null = null;
  let flushing: Promise<void> = Promise.resolve();

  /** Appends one batch, retrying with backoff for up to retryForMs; never rejects. */
  const store = async (lines: string[], numbers: { first: number; last: number }): Promise<void> => {
    const which = numbers.first === numbers.last ? `line ${numbers.first}` : `lines ${numbers.first}–${numbers.last}`;
    const giveUpAt = performance.now() + retryForMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const stored = await log.append(lines);
        if (attempt > 0) process.stderr.write(`${which}: stored after ${attempt} retr${attempt === 1 ? 'y' : 'ies'}\n`);
        published += stored.length;
        firstId ??= stored[0]?.id ?? null;
        lastId = stored.at(-1)?.id ?? lastId;
        return;
      } catch (error) {
        const reason = describeFailure(error);
        const wait = Math.min(FIRST_RETRY_MS * 2 ** attempt, MAX_RETRY_MS);
        if (performance.now() + wait > giveUpAt) {
          lost += lines.length;
          process.stderr.write(`${which}: NOT stored (${reason}); gave up after ${retryForMs} ms, going on with the next lines\n`);
          return;
        }
        if (attempt === 0) process.stderr.write(`${which}: not stored yet (${reason}); retrying for up to ${retryForMs} ms\n`);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  };

  const flush = (): Promise<void> => {
    if (timer !== null) clearImmediate(timer);
    timer = null;
    const lines = batch;
    const numbers = batchLines;
    batch = [];
    if (lines.length === 0) return flushing;
    flushing = flushing.then(() => store(lines, numbers));
    return flushing;
  };

  try {
    const lines = readline.createInterface({ input, crlfDelay: Infinity });
    let lineNumber = 0;
    for await (const raw of lines) {
      lineNumber += 1;
      const line = raw.trim();
      if (line === '') continue;
      const problem = validate(line);
      if (problem !== null) {
        bad += 1;
        process.stderr.write(`line ${lineNumber}: ${problem}; skipped\n`);
        continue;
      }
      if (batch.length === 0) batchLines = { first: lineNumber, last: lineNumber };
      batch.push(line);
      batchLines.last = lineNumber;
      if (batch.length >= BATCH_LINES) await flush();
      else timer ??= setImmediate(() => void flush().catch(() => {}));
    }
    await flush();
  } finally {
    if (timer !== null) clearImmediate(timer);
    await flushing.catch(() => {});
    await log.close();
  }
  const ids = firstId === null ? '' : ` (ids ${firstId}–${lastId ?? firstId})`;
  const notStored = lost === 0 ? '' : `; ${lost} event${lost === 1 ? '' : 's'} NOT stored (see above)`;
  process.stdout.write(`published ${published} price event${published === 1 ? '' : 's'}${ids}; ${bad} bad line${bad === 1 ? '' : 's'} skipped${notStored}\n`);
  return bad > 0 || lost > 0 ? 1 : 0;
}

/** The reason an append failed, with its cause (what the price log said). */
function describeFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
  return cause === undefined || message.includes(cause) ? message : `${message} Cause: ${cause}`;
}

async function simulate(args: string[], deps: PricesCommandDeps): Promise<number> {
  const parsed = parseCommand(commandSpec('prices simulate'), args);
  if ('exit' in parsed) return parsed.exit;
  let rate: number | undefined;
  let variantCount: number;
  try {
    rate = numericValue('rate', PRICES_SIMULATE_SETTINGS.rate, parsed.values['rate'] as string | undefined);
    variantCount = numericValue('variants', PRICES_SIMULATE_SETTINGS.variants, parsed.values['variants'] as string | undefined)!;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  if (rate === undefined) {
    process.stderr.write('--rate is required: events per second\n');
    return 2;
  }
  const logger = createLogger({ level: 'info' });
  const log = await openPriceLog(priceLogUrl(parsed.values), logger);
  // Real variants only from a catalog named by --db or DATABASE_URL; else synthetic ones.
  const databaseUrl = parsed.values['db'] as string | undefined;
  let variants: readonly SimulatedVariant[] = [];
  if (deps.sampleVariants !== undefined && databaseUrl !== undefined) variants = await deps.sampleVariants(databaseUrl, variantCount);
  if (variants.length === 0) variants = syntheticVariants(variantCount);

  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let reported = 0;
  const progress = setInterval(() => process.stderr.write(`published ${reported} simulated price events\n`), 5000);
  progress.unref();
  try {
    process.stderr.write(`simulating ${rate} price events/s over ${variants.length} variants; Ctrl-C stops\n`);
    const total = await runSimulator({
      rate,
      variants,
      priceLog: log,
      signal: controller.signal,
      logger,
      onPublished: (count) => (reported = count),
    });
    process.stdout.write(`published ${total} simulated price events\n`);
    return 0;
  } finally {
    clearInterval(progress);
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await log.close();
  }
}
