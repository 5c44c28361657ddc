import { arenaBits, releaseBits } from '../kernels.ts';
import { fillBits, wordsFor } from './bits.ts';

/**
 * Bitsets of one length for the searches in flight: each search takes them into a scope of its own
 * and hands them back when it ends, whether or not other searches are in flight, so bitsets of n/8
 * bytes are reused instead of allocated per search (external memory the GC would collect in full
 * pauses).
 * Guarantee: a bitset goes back (to be handed out again, or to the arena) only when the scope it
 * was taken into ends, so a search that takes into its own scope holds its bitsets until it ends,
 * across its awaits; the scope is named at each `take`, never inferred from the search begun last.
 */
export class BitsetPool {
  #words = 0;
  #free: Uint32Array[] = [];

  /** Starts a search over `size` slots (every bitset it takes is `wordsFor(size)` words): its scope. */
  begin(size: number): Uint32Array[] {
    const words = wordsFor(size);
    if (words !== this.#words) {
      this.#words = words;
      for (const bits of this.#free) releaseBits(bits);
      this.#free = [];
    }
    return [];
  }

  /** Ends a search: every bitset its scope took is free again. */
  end(scope: Uint32Array[]): void {
    for (const bits of scope) {
      if (bits.length === this.#words && this.#free.length < MAX_FREE) this.#free.push(bits);
      else releaseBits(bits);
    }
    scope.length = 0;
  }

  /**
   * A bitset for the search of `scope` (undefined: none; the bitset is left to the GC): cleared, or
   * with whatever it held when `zeroed` is false.
   */
  take(scope: Uint32Array[] | undefined, zeroed: boolean): Uint32Array {
    const reused = this.#free.pop();
    const bits = reused ?? arenaBits(this.#words, zeroed);
    if (reused !== undefined && zeroed) fillBits(bits, false);
    // A search that takes more than this leaves the rest to the GC.
    if (scope !== undefined && scope.length < MAX_FREE) scope.push(bits);
    return bits;
  }
}

const MAX_FREE = 256;
