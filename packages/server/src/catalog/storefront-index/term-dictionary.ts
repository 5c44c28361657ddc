import { Growable } from './growable.ts';

/**
 * Folded strings to small integers, exactly, with no JavaScript string kept per term: the UTF-8
 * bytes of every term in one buffer, found through an open-addressing table of FNV-1a hashes.
 */
export class TermDictionary {
  #bytes: Uint8Array = new Uint8Array(1 << 16);
  #used = 0;
  /** starts[code] .. starts[code + 1]: the term's bytes. */
  readonly #starts = new Growable((n) => new Uint32Array(n));
  readonly #hashes = new Growable((n) => new Uint32Array(n));
  #size = 0;
  /** code + 1 per table slot, 0 when empty; a power of two, at most three quarters full. */
  #table: Int32Array = new Int32Array(1024);
  #scratch = new Uint8Array(256);

  get size(): number {
    return this.#size;
  }

  /**
   * The code of `foldText(raw)`, adding it when new. Printable ASCII (what most tags and words are)
   * is lower-cased into the scratch buffer directly: no string is made.
   */
  codeFolded(raw: string, fold: (text: string) => string): number {
    const length = raw.length;
    if (length > this.#scratch.length) this.#scratch = new Uint8Array(length * 3);
    const scratch = this.#scratch;
    for (let i = 0; i < length; i += 1) {
      let unit = raw.charCodeAt(i);
      if (unit < 0x20 || unit > 0x7e) return this.code(fold(raw));
      if (unit >= 0x41 && unit <= 0x5a) unit += 0x20;
      scratch[i] = unit;
    }
    return this.#codeOfScratch(length);
  }

  /** The term's code, adding it when new. */
  code(term: string): number {
    return this.#codeOfScratch(this.#encode(term));
  }

  /** The code of the term whose UTF-8 bytes are the scratch buffer's first `length`. */
  #codeOfScratch(length: number): number {
    const hash = fnv(this.#scratch, length);
    const found = this.#lookup(hash, length);
    if (found >= 0) return found;
    const code = this.#size;
    if (this.#used + length > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(this.#used + length, this.#bytes.length * 2));
      grown.set(this.#bytes.subarray(0, this.#used));
      this.#bytes = grown;
    }
    this.#bytes.set(this.#scratch.subarray(0, length), this.#used);
    this.#starts.ensure(code + 2);
    this.#hashes.ensure(code + 1);
    this.#starts.data[code] = this.#used;
    this.#used += length;
    this.#starts.data[code + 1] = this.#used;
    this.#hashes.data[code] = hash;
    this.#size += 1;
    if (this.#size * 4 > this.#table.length * 3) this.#rehash(this.#table.length * 2);
    else this.#place(code, hash);
    return code;
  }

  /** The term's code, or -1 when no slot ever held it. */
  find(term: string): number {
    const length = this.#encode(term);
    return this.#lookup(fnv(this.#scratch, length), length);
  }

  /** Its state as typed arrays (views: copy or write them before the next `code`). */
  parts(): [Uint8Array, Uint32Array, Uint32Array, Int32Array] {
    return [this.#bytes.subarray(0, this.#used), this.#starts.data.subarray(0, this.#size + 1), this.#hashes.data.subarray(0, this.#size), this.#table];
  }

  /** A dictionary of the state `parts` gave. */
  static fromParts(bytes: Uint8Array<ArrayBuffer>, starts: Uint32Array<ArrayBuffer>, hashes: Uint32Array<ArrayBuffer>, table: Int32Array<ArrayBuffer>): TermDictionary {
    const dictionary = new TermDictionary();
    dictionary.#bytes = bytes;
    dictionary.#used = bytes.length;
    dictionary.#size = hashes.length;
    dictionary.#starts.data = starts;
    dictionary.#hashes.data = hashes;
    dictionary.#table = table;
    return dictionary;
  }

  /** Gives back spare room once a load is done. */
  trim(): void {
    this.#starts.trim(this.#size + 1);
    this.#hashes.trim(this.#size);
    if (this.#bytes.length > this.#used + (this.#used >>> 3) + 1024) this.#bytes = this.#bytes.slice(0, this.#used + (this.#used >>> 3) + 1024);
  }

  #encode(term: string): number {
    // UTF-8 takes at most three bytes per UTF-16 unit.
    if (term.length * 3 > this.#scratch.length) this.#scratch = new Uint8Array(term.length * 3);
    return encoder.encodeInto(term, this.#scratch).written;
  }

  #lookup(hash: number, length: number): number {
    const mask = this.#table.length - 1;
    const starts = this.#starts.data;
    const hashes = this.#hashes.data;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const entry = this.#table[at]!;
      if (entry === 0) return -1;
      const code = entry - 1;
      if (hashes[code] !== hash) continue;
      const start = starts[code]!;
      if (starts[code + 1]! - start !== length) continue;
      let same = true;
      for (let i = 0; i < length && same; i += 1) same = this.#bytes[start + i] === this.#scratch[i];
      if (same) return code;
    }
  }

  #place(code: number, hash: number): void {
    const mask = this.#table.length - 1;
    let at = hash & mask;
    while (this.#table[at] !== 0) at = (at + 1) & mask;
    this.#table[at] = code + 1;
  }

  #rehash(length: number): void {
    this.#table = new Int32Array(length);
    for (let code = 0; code < this.#size; code += 1) this.#place(code, this.#hashes.data[code]!);
  }
}

const encoder = new TextEncoder();

function fnv(bytes: Uint8Array, length: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < length; i += 1) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}
