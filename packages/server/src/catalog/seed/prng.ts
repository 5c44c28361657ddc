// A small seeded PRNG (sfc32, seeded through a 32-bit string hash). Not cryptographic; chosen so the
// same seed yields the same catalog on every platform and Node version.

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
  /** `count` hexadecimal digits. */
  hex(count: number): string;
  /** A version-4-shaped UUID. */
  uuid(): string;
}

function hash32(text: string, salt: number): number {
  let h = (0x811c9dc5 ^ salt) >>> 0;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // Murmur3 finaliser: spreads nearby inputs (seed:0, seed:1) far apart.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** A generator determined entirely by `key` (e.g. `${seed}:catalog:${index}`). */
export function createRandom(key: string): Random {
  let a = hash32(key, 1);
  let b = hash32(key, 2);
  let c = hash32(key, 3);
  let d = 1;
  const next = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 12; i += 1) next();
  const random: Random = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new RangeError('pick from an empty list');
      return item;
    },
    chance: (probability) => next() < probability,
    hex: (count) => {
      let out = '';
      for (let i = 0; i < count; i += 1) out += Math.floor(next() * 16).toString(16);
      return out;
    },
    uuid: () => {
      const h = random.hex(32);
      const variant = ((parseInt(h.charAt(16), 16) & 0x3) | 0x8).toString(16);
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
    },
  };
  return random;
}
