import { IntList } from './growable.ts';
import { setBit } from './bits.ts';

/** Share of the compact block's entries the log of later changes may reach before a rebuild. */
const POSTINGS_LOG_SHARE = 1 / 16;
const POSTINGS_LOG_MIN = 16_384;

/**
 * Posting lists: for each term (a small integer), the slots that hold it. One compact block (each
 * term's slots ascending, found through an offset per term) plus a log of the entries added since
 * it was built; an entry whose slot no longer holds its term is stale and is skipped by asking
 * the owner (`holds`), which keeps each slot's terms.
 *
 * Guarantees: exact, given `holds`. Limits: a read with stale entries about costs a `holds` call
 * per entry; `compact` (O(entries + terms)) is due once the log or the stale entries pass
 * POSTINGS_LOG_SHARE of the entries, and the owner calls it between searches.
 */
export class Postings {
  /** offsets[term] .. offsets[term + 1]: the term's slots in `slots`, for terms below `#terms`. */
  #offsets: Uint32Array = new Uint32Array(1);
  #slots: Int32Array = new Int32Array(0);
  #terms = 0;
  /** Entries added since the block was built, as (term, slot) pairs. */
  readonly #logTerms = new IntList();
  readonly #logSlots = new IntList();
  /** Per term of the log, its entries' positions in the log, built on the first read after an add. */
  #logByTerm: Map<number, number[]> | undefined;
  /** Entries whose slot dropped their term since the block was built. */
  stale = 0;

  add(term: number, slot: number): void {
    this.#logTerms.push(term);
    this.#logSlots.push(slot);
    this.#logByTerm = undefined;
  }

  /** Counts an entry made stale by a slot that no longer holds its term. */
  drop(): void {
    this.stale += 1;
  }

  /** Whether the block alone answers: nothing logged, nothing stale. */
  get clean(): boolean {
    return this.#logTerms.length === 0 && this.stale === 0;
  }

  get due(): boolean {
    const limit = Math.max(POSTINGS_LOG_MIN, this.#slots.length * POSTINGS_LOG_SHARE);
    return this.#logTerms.length > limit || this.stale > limit;
  }

  /** The entries a read of `term` goes through (its block's and its logged ones, stale ones included): what setBits costs. */
  entries(term: number): number {
    const block = term < this.#terms ? this.#offsets[term + 1]! - this.#offsets[term]! : 0;
    return this.#logTerms.length === 0 ? block : block + (this.#logIndex().get(term)?.length ?? 0);
  }

  /** Sets in `bits` the slots that hold `term`. */
  setBits(term: number, bits: Uint32Array, holds: (slot: number, term: number) => boolean): void {
    if (this.stale === 0 && term < this.#terms) {
      // Nothing stale: the block's entries are set without asking (the common case, and the long lists).
      const slots = this.#slots;
      const end = this.#offsets[term + 1]!;
      for (let i = this.#offsets[term]!; i < end; i += 1) bits[slots[i]! >>> 5]! |= 1 << (slots[i]! & 31);
      if (this.#logTerms.length === 0) return;
      this.#forEachLogged(term, (slot) => setBit(bits, slot), holds);
      return;
    }
    this.forEach(term, (slot) => setBit(bits, slot), holds);
  }

  /** Calls `each` once with every slot that holds `term` (log entries after the block's). */
  forEach(term: number, each: (slot: number) => void, holds: (slot: number, term: number) => boolean): void {
    const checked = this.stale > 0;
    if (term < this.#terms) {
      const slots = this.#slots;
      const end = this.#offsets[term + 1]!;
      for (let i = this.#offsets[term]!; i < end; i += 1) {
        const slot = slots[i]!;
        if (!checked || holds(slot, term)) each(slot);
      }
    }
    if (this.#logTerms.length === 0) return;
    this.#forEachLogged(term, each, holds);
  }

  #forEachLogged(term: number, each: (slot: number) => void, holds: (slot: number, term: number) => boolean): void {
    const slots = this.#logIndex().get(term);
    if (slots === undefined) return;
    for (const slot of slots) if (holds(slot, term)) each(slot);
  }

  /**
   * Per term, the slots logged for it, each once and none the block lists for it: a slot that
   * dropped a term and took it again is logged again, and is still one slot.
   */
  #logIndex(): Map<number, number[]> {
    if (this.#logByTerm !== undefined) return this.#logByTerm;
    const byTerm = new Map<number, Set<number>>();
    const terms = this.#logTerms.data;
    const logSlots = this.#logSlots.data;
    for (let i = 0; i < this.#logTerms.length; i += 1) {
      const term = terms[i]!;
      const slot = logSlots[i]!;
      if (this.#inBlock(term, slot)) continue;
      let slots = byTerm.get(term);
      if (slots === undefined) byTerm.set(term, (slots = new Set()));
      slots.add(slot);
    }
    this.#logByTerm = new Map([...byTerm].map(([term, slots]) => [term, [...slots]]));
    return this.#logByTerm;
  }

  /** Whether the block lists `slot` for `term` (its slots ascend: a binary search). */
  #inBlock(term: number, slot: number): boolean {
    if (term >= this.#terms) return false;
    let low = this.#offsets[term]!;
    let high = this.#offsets[term + 1]!;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#slots[middle]! < slot) low = middle + 1;
      else high = middle;
    }
    return low < this.#offsets[term + 1]! && this.#slots[low] === slot;
  }

  /**
   * Rebuilds the block from every slot's terms (`termsOf(slot, emit)` emits each once), slots
   * ascending, and empties the log.
   */
  compact(size: number, terms: number, termsOf: (slot: number, emit: (term: number) => void) => void): void {
    const offsets = new Uint32Array(terms + 1);
    for (let slot = 0; slot < size; slot += 1) termsOf(slot, (term) => (offsets[term + 1]! += 1));
    for (let term = 0; term < terms; term += 1) offsets[term + 1]! += offsets[term]!;
    const slots = new Int32Array(offsets[terms]!);
    const next = offsets.slice(0, terms);
    for (let slot = 0; slot < size; slot += 1) termsOf(slot, (term) => (slots[next[term]!++] = slot));
    this.#offsets = offsets;
    this.#slots = slots;
    this.#terms = terms;
    this.#logTerms.clear();
    this.#logSlots.clear();
    this.#logTerms.trim();
    this.#logSlots.trim();
    this.#logByTerm = undefined;
    this.stale = 0;
  }

  /** The compact block (for a snapshot: `compact` first, so the log is empty). */
  parts(): [Uint32Array, Int32Array] {
    return [this.#offsets, this.#slots];
  }

  /** Takes a block `parts` gave, with an empty log. */
  restore(offsets: Uint32Array, slots: Int32Array): void {
    this.#offsets = offsets;
    this.#slots = slots;
    this.#terms = offsets.length - 1;
    this.#logTerms.clear();
    this.#logSlots.clear();
    this.#logByTerm = undefined;
    this.stale = 0;
  }
}
