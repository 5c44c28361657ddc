/** Work between two yields of a search to the event loop. */
export const SLICE_MS = 2;

/**
 * Tells a search when it has worked a slice, and yields (setImmediate, so I/O runs first) then;
 * carries the search's version and its scope of pooled bitsets (every bitset it takes goes there).
 */
export class Slices {
  readonly #sliceMs: number;
  #since = performance.now();
  /** The index's version when the search began. */
  readonly version: number;
  readonly scope: Uint32Array[];
  constructor(sliceMs: number, version: number, scope: Uint32Array[]) {
    this.#sliceMs = sliceMs;
    this.version = version;
    this.scope = scope;
  }
  /** What is left of the current slice, in milliseconds, at most one default slice. */
  remainingMs(): number {
    return Math.min(SLICE_MS, this.#sliceMs - (performance.now() - this.#since));
  }

  pause(): Promise<void> | undefined {
    if (performance.now() - this.#since < this.#sliceMs) return undefined;
    return new Promise((resolve) => {
      setImmediate(() => {
        this.#since = performance.now();
        resolve();
      });
    });
  }
}

