// Stored match counts for short GTIN fragments, one definition for every engine. A GTIN search
// answers with the exact number of variants whose GTIN contains the fragment; short fragments
// (brand prefixes, leading zeros) are shared by a large part of a catalog, where counting the
// matches would read up to every variant, so their counts are kept:
// - every 4- and 5-digit fragment (at most 110,000 of them), always;
// - a 6-digit fragment shared by at least STORED_COUNT_MIN variants when counts were last taken
//   (after every bulk load); from then on it is kept current like the others.
// A fragment counts a variant once however often its GTIN holds it ("12121212" holds "1212" three
// times). Longer fragments, and 6-digit ones without a stored count, are counted by the engine.

export const FRAGMENT_MIN = 4;
/** The longest fragment a search takes: a whole GTIN-14. */
export const FRAGMENT_MAX = 14;

/**
 * Whether `text` is a GTIN fragment a search takes: 4 to 14 digits. The one check, made where a
 * search enters the domain (catalog-service.ts); engines rely on it (a shorter fragment would miss
 * matches in the last characters of a GTIN, which hold no suffix of 4).
 */
export function isGtinFragment(text: string): boolean {
  return text.length >= FRAGMENT_MIN && text.length <= FRAGMENT_MAX && /^\d+$/u.test(text);
}
/** Fragments at most this long may have their match count stored. */
export const COUNTED_FRAGMENT_MAX = 6;
/** Fragments at most this long always have it stored (a missing one counts no variant). */
export const ALWAYS_COUNTED_MAX = 5;
/** A 6-digit fragment's count is stored from this many variants; below it, counting is cheap. */
export const STORED_COUNT_MIN = 512;

/**
 * The match count stored for `fragment` decides its total when there is one, and for fragments
 * always counted a missing one means none; else undefined: the engine counts.
 */
export function totalFromStored(fragment: string, stored: number | undefined): number | undefined {
  if (fragment.length > COUNTED_FRAGMENT_MAX) return undefined;
  if (stored !== undefined) return stored;
  return fragment.length <= ALWAYS_COUNTED_MAX ? 0 : undefined;
}

/**
 * Every suffix of a GTIN at least FRAGMENT_MIN long, longest first: the variants whose GTIN
 * contains a fragment are those with a suffix starting with it.
 */
export function gtinSuffixes(gtin: string): string[] {
  const suffixes: string[] = [];
  for (let start = 0; start + FRAGMENT_MIN <= gtin.length; start += 1) suffixes.push(gtin.slice(start));
  return suffixes;
}

/** The smallest string above every string that starts with `prefix` (byte order): a suffix range's end. */
export function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** The distinct 4- to 6-digit fragments of a GTIN (fragments with other characters never match a query). */
export function countedFragments(gtin: string): Set<string> {
  const fragments = new Set<string>();
  for (let length = FRAGMENT_MIN; length <= COUNTED_FRAGMENT_MAX; length += 1) {
    for (let start = 0; start + length <= gtin.length; start += 1) {
      const fragment = gtin.slice(start, start + length);
      if (/^\d+$/u.test(fragment)) fragments.add(fragment);
    }
  }
  return fragments;
}

/**
 * Net changes to stored counts from variants leaving (`remove`) and arriving (`add`), for one
 * transaction: a variant rewritten with its GTIN unchanged nets to nothing.
 */
export class FragmentDeltas {
  readonly #deltas = new Map<string, number>();
  add(gtin: string): void {
    for (const fragment of countedFragments(gtin)) this.#deltas.set(fragment, (this.#deltas.get(fragment) ?? 0) + 1);
  }
  remove(gtin: string): void {
    for (const fragment of countedFragments(gtin)) this.#deltas.set(fragment, (this.#deltas.get(fragment) ?? 0) - 1);
  }
  /**
   * Non-zero changes in ascending fragment order (engines that lock rows take them in this order,
   * so concurrent writers cannot deadlock): `always` for counts kept whatever they are (upserted),
   * `ifStored` for 6-digit ones, applied only where a count is stored.
   */
  changes(): { always: [string, number][]; ifStored: [string, number][] } {
    const always: [string, number][] = [];
    const ifStored: [string, number][] = [];
    for (const entry of [...this.#deltas].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (entry[1] === 0) continue;
      (entry[0].length <= ALWAYS_COUNTED_MAX ? always : ifStored).push(entry);
    }
    return { always, ifStored };
  }
  clear(): void {
    this.#deltas.clear();
  }
}

/** Counts taken from scratch over every stored GTIN, fed in comma-joined chunks (one string per chunk, not one per row). */
export class FragmentTally {
  // Typed arrays indexed by the fragment's value (unique per length): a count is one increment,
  // with no hashing and no row per fragment, which is why counting is not a GROUP BY in the
  // database. Stored GTINs are digits (the contract's pattern, checked on import), so commas
  // separate them.
  readonly #counts = Array.from({ length: COUNTED_FRAGMENT_MAX + 1 }, (_, length) =>
    length < FRAGMENT_MIN ? new Int32Array(0) : new Int32Array(10 ** length),
  );
  readonly #seen: number[] = [];

  addJoined(gtins: string): void {
    for (let from = 0; from < gtins.length; ) {
      const comma = gtins.indexOf(',', from);
      const to = comma === -1 ? gtins.length : comma;
      for (let length = FRAGMENT_MIN; length <= COUNTED_FRAGMENT_MAX; length += 1) {
        this.#seen.length = 0;
        const table = this.#counts[length]!;
        for (let start = from; start + length <= to; start += 1) {
          const code = digitsValue(gtins, start, length);
          if (code < 0 || this.#seen.includes(code)) continue;
          this.#seen.push(code);
          table[code]! += 1;
        }
      }
      from = to + 1;
    }
  }

  /** The counts to store, by the rule in this file's header. */
  *stored(): Generator<[string, number]> {
    for (let length = FRAGMENT_MIN; length <= COUNTED_FRAGMENT_MAX; length += 1) {
      const table = this.#counts[length]!;
      const least = length <= ALWAYS_COUNTED_MAX ? 1 : STORED_COUNT_MIN;
      for (let code = 0; code < table.length; code += 1) {
        if (table[code]! >= least) yield [String(code).padStart(length, '0'), table[code]!];
      }
    }
  }
}

/** The value of `length` digits of `text` from `start`, or -1 when any is not a digit. */
function digitsValue(text: string, start: number, length: number): number {
  let value = 0;
  for (let i = start; i < start + length; i += 1) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}
