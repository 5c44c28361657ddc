// The 64-bit hash the index keeps for `id`, `product_id`, `title` and `slug` instead of their text.
// Guarantee: equal folded texts hash equal. Limit: two different folded texts with the same 64-bit
// hash match each other.
import { foldText } from '../text.ts';

/**
 * The 64-bit hash (two 32-bit words) of `foldText(text)`, as kept for `id`, `product_id`, `title`
 * and `slug`. Printable ASCII is lower-cased as it is hashed (what foldText does to it).
 */
export function hashOf(text: string): [number, number] {
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || unit > 0x7e) return hashOfFolded(foldText(text));
  }
  return hashOfFolded(text, true);
}

function hashOfFolded(text: string, lowerAscii = false): [number, number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i += 1) {
    let unit = text.charCodeAt(i);
    if (lowerAscii && unit >= 0x41 && unit <= 0x5a) unit += 0x20;
    h1 = Math.imul(h1 ^ unit, 2654435761);
    h2 = Math.imul(h2 ^ unit, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [h1 >>> 0, h2 >>> 0];
}

export function hashInto(hashes: Uint32Array, slot: number, text: string): void {
  const [low, high] = hashOf(text);
  hashes[2 * slot] = low;
  hashes[2 * slot + 1] = high;
}

/** The distinct hashes of `values` (as text), each once. */
export function distinctHashes(values: readonly unknown[]): [number, number][] {
  const seen = new Set<string>();
  const hashes: [number, number][] = [];
  for (const value of values) {
    const [low, high] = hashOf(String(value));
    const key = `${low}:${high}`;
    if (seen.has(key)) continue;
    seen.add(key);
    hashes.push([low, high]);
  }
  return hashes;
}
