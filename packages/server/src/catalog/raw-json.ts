// JSON text of a value of a known type, passed from the stores to the response unparsed: a
// document is written into an answer exactly as it was stored, with no parse and no
// re-serialisation. The brand keeps it apart from any other string, so only text that is known to
// be the JSON of a T reaches a response as one.
// Made in two places only: by a store, for the text it holds (`storedJson`: what was imported,
// validated against the contract, reads back byte for byte), and by `jsonOf` (JSON.stringify).
declare const jsonOfType: unique symbol;

export type RawJson<T> = string & { readonly [jsonOfType]: T };

/** For stores: the text they hold for a T (written from a validated T, read back unchanged). */
export function storedJson<T>(text: string): RawJson<T> {
  return text as RawJson<T>;
}

/** The JSON text of `value`. */
export function jsonOf<T>(value: T): RawJson<T> {
  return JSON.stringify(value) as RawJson<T>;
}
