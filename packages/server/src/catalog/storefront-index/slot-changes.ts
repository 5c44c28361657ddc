// What one write batch changed in the columns, for the structures kept beside them (leaf cache, pair
// tables) to follow slot by slot: the slots added, the slots rewritten, and the fields a rewrite
// changed.
//
// Guarantees: each slot is listed once (a slot added and rewritten in one batch as added); added
// slots ascend. A field is listed as changed when some rewrite gave it a different value (added
// slots change every field and are not counted there).
// Limits: a batch that adds or rewrites more than BULK_SHARE of the slots held (at least BULK_MIN)
// is recorded as `bulk` only: following it slot by slot would cost more than rebuilding.

/** Slots a batch follows slot by slot, as a share of the slots held, and at least. */
const BULK_SHARE = 1 / 16;
const BULK_MIN = 4_096;

export class SlotChanges {
  /** Slots the batch added, ascending. */
  readonly added: number[] = [];
  /** Slots the batch rewrote that were held before it, each once. */
  readonly rewritten: number[] = [];
  /** Fields a rewrite changed: the number and coded fields, the hashed ones, `tags`, `title` (its words), `available`. */
  readonly touched = new Set<string>();
  /** Too many slots to follow one by one: the lists above are incomplete. */
  bulk = false;
  readonly #limit: number;
  readonly #rewritten = new Set<number>();

  /** For a batch over columns holding `size` slots. */
  constructor(size: number) {
    this.#limit = Math.max(BULK_MIN, Math.ceil(size * BULK_SHARE));
  }

  /** Notes `slot` added (call once per new slot, ascending). */
  add(slot: number): void {
    if (this.bulk) return;
    if (this.added.length + this.rewritten.length >= this.#limit) {
      this.bulk = true;
      return;
    }
    this.added.push(slot);
  }

  /** Notes `slot` (held before the batch) rewritten. */
  rewrite(slot: number): void {
    if (this.bulk || this.#rewritten.has(slot) || slot >= this.#firstAdded()) return;
    if (this.added.length + this.rewritten.length >= this.#limit) {
      this.bulk = true;
      return;
    }
    this.#rewritten.add(slot);
    this.rewritten.push(slot);
  }

  /** Whether the batch changed anything. */
  get empty(): boolean {
    return !this.bulk && this.added.length === 0 && this.touched.size === 0;
  }

  #firstAdded(): number {
    return this.added.length === 0 ? Number.POSITIVE_INFINITY : this.added[0]!;
  }
}
