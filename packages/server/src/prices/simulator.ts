// The price simulator: plausible price events for catalog variants, so a fresh install shows a
// live stream at once. Each (variant, source, market) keeps its own price, starting from the
// variant's price converted into the market's currency and moving by small random steps with an
// occasional markdown or restock jump. Not a market model: numbers look right, nothing more.
import type { CatalogVariant, PriceEvent } from '../catalog/model.ts';
import type { Logger } from '../logger.ts';
import type { PriceLog } from './price-log.ts';

export interface Market {
  /** Lowercase ISO 3166-1 alpha-2 code, as in topics. */
  code: string;
  currency: string;
  /** Units of `currency` per US dollar, roughly. */
  perUsd: number;
  /** Decimal places of the currency's prices. */
  decimals: number;
}

export const MARKETS: readonly Market[] = [
  { code: 'us', currency: 'USD', perUsd: 1, decimals: 2 },
  { code: 'uk', currency: 'GBP', perUsd: 0.79, decimals: 2 },
  { code: 'de', currency: 'EUR', perUsd: 0.92, decimals: 2 },
  { code: 'fr', currency: 'EUR', perUsd: 0.92, decimals: 2 },
  { code: 'nl', currency: 'EUR', perUsd: 0.92, decimals: 2 },
  { code: 'jp', currency: 'JPY', perUsd: 150, decimals: 0 },
  { code: 'ca', currency: 'CAD', perUsd: 1.36, decimals: 2 },
  { code: 'au', currency: 'AUD', perUsd: 1.52, decimals: 2 },
];

export const PRICE_SOURCES: readonly PriceEvent['source'][] = ['marketplacea', 'marketplaceb'];

/** The variant fields the simulator reads. */
export type SimulatedVariant = Pick<CatalogVariant, 'id' | 'product_id' | 'sku' | 'size' | 'price' | 'currency'>;

/** A small deterministic PRNG (mulberry32), so a seed reproduces a run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A nanosecond UTC clock: wall time at creation plus the monotonic clock since, so timestamps
 * never go backwards within a process. Format `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`.
 */
export function nanosecondClock(): () => string {
  const originNs = BigInt(Date.now()) * 1_000_000n;
  const originHr = process.hrtime.bigint();
  let last = 0n;
  return () => {
    let ns = originNs + (process.hrtime.bigint() - originHr);
    if (ns <= last) ns = last + 1n;
    last = ns;
    return formatNanoseconds(ns);
  };
}

export function formatNanoseconds(epochNs: bigint): string {
  const ms = Number(epochNs / 1_000_000n);
  const fraction = (epochNs % 1_000_000_000n).toString().padStart(9, '0');
  return `${new Date(ms).toISOString().slice(0, 19)}.${fraction}Z`;
}

export class PriceSimulator {
  readonly #variants: readonly SimulatedVariant[];
  readonly #random: () => number;
  readonly #now: () => string;
  readonly #prices = new Map<string, number>();

  constructor(variants: readonly SimulatedVariant[], options: { random?: () => number; now?: () => string } = {}) {
    if (variants.length === 0) throw new Error('the price simulator needs at least one variant');
    this.#variants = variants;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? nanosecondClock();
  }

  next(): PriceEvent {
    const variant = this.#pick(this.#variants);
    const source = this.#pick(PRICE_SOURCES);
    const market = this.#pick(MARKETS);
    const key = `${variant.id}|${source}|${market.code}`;
    const previous = this.#prices.get(key) ?? this.#startingPrice(variant, market);
    const price = this.#move(previous, market);
    this.#prices.set(key, price);
    return {
      source,
      product_id: variant.product_id,
      variant_id: variant.id,
      size: variant.size,
      price,
      currency: market.currency,
      market: market.code.toUpperCase(),
      sku: variant.sku,
      timestamp: this.#now(),
    };
  }

  #startingPrice(variant: SimulatedVariant, market: Market): number {
    const fromCurrency = MARKETS.find((m) => m.currency === variant.currency.toUpperCase());
    const usd = variant.price > 0 ? variant.price / (fromCurrency?.perUsd ?? 1) : 80 + this.#random() * 170;
    // Resale markets differ a little from one another.
    return round(usd * market.perUsd * (0.95 + this.#random() * 0.1), market.decimals);
  }

  /** Mostly within ±2 %, one move in twenty a markdown or a jump of up to 15 %. */
  #move(price: number, market: Market): number {
    const r = this.#random();
    const jump = r < 0.05 ? -(0.05 + this.#random() * 0.1) : r > 0.97 ? 0.05 + this.#random() * 0.1 : (this.#random() - 0.5) * 0.04;
    const floor = market.perUsd * 20;
    return Math.max(round(floor, market.decimals), round(price * (1 + jump), market.decimals));
  }

  #pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#random() * items.length)] as T;
  }
}

function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

const SIZES = ['6', '6.5', '7', '7.5', '8', '8.5', '9', '9.5', '10', '10.5', '11', '11.5', '12', '13'];

/** Stand-in variants when no catalog is at hand: stable ids, SKU-like style codes, US sizes. */
export function syntheticVariants(count: number, seed = 1): SimulatedVariant[] {
  const random = seededRandom(seed);
  const hex = (length: number): string => Array.from({ length }, () => Math.floor(random() * 16).toString(16)).join('');
  const uuid = (): string => `${hex(8)}-${hex(4)}-4${hex(3)}-${(8 + Math.floor(random() * 4)).toString(16)}${hex(3)}-${hex(12)}`;
  const variants: SimulatedVariant[] = [];
  while (variants.length < count) {
    const productId = uuid();
    const sku = `${String.fromCharCode(65 + Math.floor(random() * 26))}${String.fromCharCode(65 + Math.floor(random() * 26))}${String(1000 + Math.floor(random() * 9000))}-${String(100 + Math.floor(random() * 900))}`;
    const price = round(60 + random() * 190, 2);
    for (const size of SIZES.slice(0, 4 + Math.floor(random() * 8))) {
      if (variants.length >= count) break;
      variants.push({ id: uuid(), product_id: productId, sku, size, price, currency: 'USD' });
    }
  }
  return variants;
}

export interface RunSimulatorOptions {
  /** Events per second (may be fractional). */
  rate: number;
  variants: readonly SimulatedVariant[];
  priceLog: PriceLog;
  signal: AbortSignal;
  logger?: Logger;
  /** Called after each append with the running total, for progress output. */
  onPublished?: (total: number) => void;
  random?: () => number;
}

/**
 * Appends `rate` events per second until `signal` aborts, in small batches every tick (at most
 * every 100 ms). A failing append is logged and retried on the next tick; the run does not stop.
 * Resolves with the number of events published.
 */
export async function runSimulator(options: RunSimulatorOptions): Promise<number> {
  const { rate, priceLog, signal, logger } = options;
  if (!(rate > 0)) throw new Error(`the simulator rate must be positive, got ${rate}`);
  const simulator = new PriceSimulator(options.variants, options.random === undefined ? {} : { random: options.random });
  const tickMs = Math.max(10, Math.min(100, 1000 / rate));
  let owed = 0;
  let total = 0;
  let last = performance.now();
  while (!signal.aborted) {
    await sleep(tickMs, signal);
    const now = performance.now();
    owed += ((now - last) / 1000) * rate;
    last = now;
    const count = Math.min(Math.floor(owed), Math.ceil(rate));
    if (count === 0 || signal.aborted) continue;
    owed -= count;
    try {
      await priceLog.append(Array.from({ length: count }, () => simulator.next()));
      total += count;
      options.onPublished?.(total);
    } catch (error) {
      logger?.warn('simulated prices could not be appended; retrying', { error });
    }
  }
  return total;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
