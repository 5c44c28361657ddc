import { Growable } from './growable.ts';

/** Each slot's list of term codes, as [count, ...codes] in one buffer; a rewrite appends a new list. */
export class TermLists {
  readonly arena = new Growable((n) => new Int32Array(n), 4096);
  readonly start = new Growable((n) => new Uint32Array(n));
  used = 0;
  /** Entries of lists no slot points to any more. */
  garbage = 0;

  set(slot: number, codes: readonly number[], fresh: boolean): void {
    if (!fresh) this.garbage += this.arena.data[this.start.data[slot]!]! + 1;
    this.arena.ensure(this.used + codes.length + 1);
    const arena = this.arena.data;
    this.start.data[slot] = this.used;
    arena[this.used] = codes.length;
    for (let i = 0; i < codes.length; i += 1) arena[this.used + 1 + i] = codes[i]!;
    this.used += codes.length + 1;
  }

  holds(slot: number, code: number): boolean {
    const arena = this.arena.data;
    const at = this.start.data[slot]!;
    const end = at + 1 + arena[at]!;
    for (let i = at + 1; i < end; i += 1) if (arena[i] === code) return true;
    return false;
  }

  forEach(slot: number, each: (code: number) => void): void {
    const arena = this.arena.data;
    const at = this.start.data[slot]!;
    const end = at + 1 + arena[at]!;
    for (let i = at + 1; i < end; i += 1) each(arena[i]!);
  }

  /** Rewrites the buffer with only the live lists, once garbage outweighs them. */
  compactWhenWasteful(size: number): void {
    if (this.garbage <= this.used / 2 + 4096) return;
    const arena = new Int32Array(this.used - this.garbage + 1024);
    let used = 0;
    const from = this.arena.data;
    for (let slot = 0; slot < size; slot += 1) {
      const at = this.start.data[slot]!;
      const length = from[at]! + 1;
      arena.set(from.subarray(at, at + length), used);
      this.start.data[slot] = used;
      used += length;
    }
    this.arena.data = arena;
    this.used = used;
    this.garbage = 0;
  }
}
