// The memory the storefront index keeps its bitsets in, and the WebAssembly SIMD kernels
// (kernels.wat) that run its word loops over them. A bitset handed out here is an ordinary
// Uint32Array, a view into one shared WebAssembly memory: JavaScript reads and writes it as any
// other, and the kernels take it by address. A JavaScript loop takes one bounds-checked step per
// 32 slots; a kernel takes 128 at a time.
//
// The memory is shared (SharedArrayBuffer) only so that growing it leaves the views already handed
// out valid: growing an unshared memory detaches its buffer. No other thread sees it.
//
// Guarantees: a block is handed out again only once its view is unreachable (a
// FinalizationRegistry) or its owner released it; a release takes effect once the current
// synchronous run of code ends (a microtask), so a view read right after another was released
// still holds what it held. A view handed out is zeroed unless its taker says it writes it whole.
// Limits: the memory is one WebAssembly memory of at most 4 GiB and never shrinks: blocks freed
// are reused for later blocks of the same size class, not given back to the system. When it is
// full, `arenaBits` hands out an ordinary array, which the callers' JavaScript loops serve.
import { KERNELS_WASM_BASE64 } from './generated/kernels.gen.ts';

interface Kernels {
  combine(into: number, from: number, words: number, flip: number, orAll: number): void;
  and3(into: number, a: number, b: number, c: number, words: number, fresh: number): number;
  count3(a: number, b: number, c: number, words: number, fa: number, fb: number, fc: number): number;
  next3(a: number, b: number, c: number, words: number, fa: number, fb: number, fc: number, from: number): number;
  prev3(a: number, b: number, c: number, fa: number, fb: number, fc: number, before: number): number;
  fill(bits: number, words: number, byte: number): void;
  copy(into: number, from: number, words: number): void;
  invert(bits: number, words: number): void;
  popcount(bits: number, words: number): number;
  any(bits: number, words: number): number;
  narrow(
    result: number,
    words: number,
    digits: number,
    hb: number,
    ht: number,
    mb: number,
    mt: number,
    lb: number,
    lt: number,
    masks: number,
    below: number,
    membersAll: number,
    note: number,
    memberWords: number,
    memberBits: number,
    fresh: number,
  ): number;
}

const PAGE_BYTES = 65_536;
/** The largest a wasm32 memory can be: 4 GiB. */
const MAX_PAGES = 65_536;
/** Blocks start on a cache line (the kernels need 16 bytes). */
const ALIGN = 64;

const memory = new WebAssembly.Memory({ initial: 16, maximum: MAX_PAGES, shared: true });
export const kernels = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(KERNELS_WASM_BASE64, 'base64')), { env: { memory } })
  .exports as unknown as Kernels;

/**
 * The buffers of the memory (a shared memory gives a new SharedArrayBuffer object each time it
 * grows; views made before stay valid): a typed array over one of them lives in the arena, and its
 * byteOffset is its address.
 */
const arenaBuffers = new WeakSet<ArrayBufferLike>([memory.buffer]);
/** The newest of them, which most views are over: compared before the WeakSet is asked. */
let newestBuffer: ArrayBufferLike = memory.buffer;

/** Whether the kernels can take `array` by address. */
export function inArena(array: Uint32Array | Int32Array): boolean {
  const buffer = array.buffer;
  return buffer === newestBuffer || arenaBuffers.has(buffer);
}

/** Bytes of a block for `bytes`: size classes an eighth of a power of two apart, so a grown bitset's block is reused by the next of its class. */
function classOf(bytes: number): number {
  const rounded = Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
  if (rounded <= 8 * ALIGN) return rounded;
  const step = 2 ** (Math.floor(Math.log2(rounded)) - 3);
  return Math.ceil(rounded / step) * step;
}

let top = ALIGN;
const free = new Map<number, number[]>();
/** Blocks released during the current run of code, free once it ends. */
let releasing: [number, number][] = [];
const registry = new FinalizationRegistry<[number, number]>(([address, bytes]) => freeBlock(address, bytes));

function freeBlock(address: number, bytes: number): void {
  let list = free.get(bytes);
  if (list === undefined) free.set(bytes, (list = []));
  list.push(address);
}

function allocate(bytes: number): number | undefined {
  const reused = free.get(bytes)?.pop();
  if (reused !== undefined) return reused;
  const end = top + bytes;
  const current = memory.buffer.byteLength / PAGE_BYTES;
  const pages = Math.ceil(end / PAGE_BYTES) - current;
  if (pages > 0) {
    if (pages > MAX_PAGES - current) return undefined;
    try {
      // Growing by a quarter at least keeps the number of grows logarithmic.
      memory.grow(Math.min(MAX_PAGES - current, Math.max(pages, Math.ceil(current / 4))));
    } catch {
      return undefined;
    }
    newestBuffer = memory.buffer;
    arenaBuffers.add(newestBuffer);
  }
  const address = top;
  top = end;
  return address;
}

/**
 * A bitset of `words` words in the arena (or, once the arena is full, an ordinary one): zeroed, or
 * with `zeroed` false holding whatever its block held (for a caller that writes every word first).
 */
export function arenaBits(words: number, zeroed = true): Uint32Array {
  const bytes = classOf(words * 4);
  const address = allocate(bytes);
  if (address === undefined) return new Uint32Array(words);
  const view = new Uint32Array(memory.buffer, address, words);
  if (zeroed) kernels.fill(address, words, 0);
  registry.register(view, [address, bytes], view);
  return view;
}

/**
 * Gives `view`'s block back once the current run of code ends. The caller must not use `view`
 * after that; a view not from the arena (or released already) is left to the GC.
 */
export function releaseBits(view: Uint32Array): void {
  if (!registry.unregister(view)) return;
  if (releasing.length === 0) queueMicrotask(flushReleased);
  releasing.push([view.byteOffset, classOf(view.length * 4)]);
}

function flushReleased(): void {
  const blocks = releasing;
  releasing = [];
  for (const [address, bytes] of blocks) freeBlock(address, bytes);
}

/** Bytes of the arena in use or free for reuse, and of the blocks free: for the index's memory figures and tests. */
export function arenaStats(): { reservedBytes: number; freeBytes: number } {
  let freeBytes = 0;
  for (const [bytes, list] of free) freeBytes += bytes * list.length;
  return { reservedBytes: top, freeBytes };
}
