// Typed arrays that grow by doubling, and give back their spare room once a load is done.
/** A typed array that grows by doubling; `trim` gives back the spare room once a load is done. */
export class Growable<T extends Float64Array | Int32Array | Uint32Array | Uint8Array> {
  data: T;
  readonly #make: (length: number) => T;
  constructor(make: (length: number) => T, initial = 1024) {
    this.#make = make;
    this.data = make(initial);
  }
  ensure(length: number): void {
    if (length <= this.data.length) return;
    const grown = this.#make(Math.max(length, this.data.length * 2));
    grown.set(this.data as never);
    this.data = grown;
  }
  /**
   * Holds exactly `length` elements: grown, or cut, into a new array made as the others are (so
   * an array the arena holds stays there).
   */
  fit(length: number): void {
    if (length === this.data.length) return;
    const fitted = this.#make(length);
    fitted.set(this.data.subarray(0, Math.min(length, this.data.length)) as never);
    this.data = fitted;
  }
  /** Shrinks to `length` plus an eighth, so the next writes do not reallocate at once. */
  trim(length: number): void {
    const target = Math.max(1024, length + (length >>> 3));
    if (target >= this.data.length) return;
    const trimmed = this.#make(target);
    trimmed.set(this.data.subarray(0, target) as never);
    this.data = trimmed;
  }
}

/** A growable list of 32-bit integers. */
export class IntList {
  readonly #values = new Growable((n) => new Int32Array(n), 16);
  length = 0;
  get data(): Int32Array {
    return this.#values.data;
  }
  push(value: number): void {
    this.#values.ensure(this.length + 1);
    this.#values.data[this.length] = value;
    this.length += 1;
  }
  clear(): void {
    this.length = 0;
  }
  trim(): void {
    this.#values.trim(this.length);
  }
}
