// JSON text of a value of a known type, passed from the stores to the response unparsed: a
// document is written into an answer exactly as it was stored, with no parse and no
// re-serialisation. The brand keeps it apart from any other string, so only text that is known to
// be the JSON of a T reaches a response as one.
// Made in two places only: by a store, for the text it holds (`storedJson`: what was imported,
// validated against the contract, reads back byte for byte; `storedJsonBytes`: the same as UTF-8
// bytes), and by `jsonOf` (JSON.stringify).
declare const jsonOfType: unique symbol;

export type RawJson<T> = string & { readonly [jsonOfType]: T };

/** For stores: the text they hold for a T (written from a validated T, read back unchanged). */
export function storedJson<T>(text: string): RawJson<T> {
  return text as RawJson<T>;
}

/**
 * The same JSON as UTF-8 bytes, as an engine hands a large text over: written to the socket as
 * they are, never decoded into a string to be measured and encoded again. Made only by stores.
 */
export type RawJsonBytes<T> = Uint8Array & { readonly [jsonOfType]: T };

/** For stores: the UTF-8 bytes they hold for a T (as `storedJson`). */
export function storedJsonBytes<T>(bytes: Uint8Array): RawJsonBytes<T> {
  return bytes as RawJsonBytes<T>;
}

/** The JSON text of `value`. */
export function jsonOf<T>(value: T): RawJson<T> {
  return JSON.stringify(value) as RawJson<T>;
}
