// The service's one definition of text matching. Every case-insensitive comparison the contract
// promises (shop_name, filter string comparisons, tags, SKU and slug look-ups) compares
// `foldText` of both sides, and the words of a `query` are `wordsOf` the text; both engines store
// or compute these values in TypeScript, so SQLite and PostgreSQL cannot disagree on them.
//
// The rule: Unicode NFC, then the default (locale-independent) lower-case mapping, then NFC again
// (lower-casing can produce a decomposed sequence, e.g. U+0130 → i + U+0307). Not full case
// folding: `ß` stays `ß` and does not match `SS`.
export function foldText(text: string): string {
  // Printable ASCII is already NFC and lower-cases to ASCII: skip both normalisations.
  if (!NOT_PRINTABLE_ASCII.test(text)) return text.toLowerCase();
  return text.normalize('NFC').toLowerCase().normalize('NFC');
}

const NOT_PRINTABLE_ASCII = /[^ -~]/u;

/**
 * The words `query` matches by: folded, compatibility-decomposed with combining marks removed
 * (so `é` matches `e`), split on anything that is not a letter or a digit.
 */
export function wordsOf(text: string): string[] {
  if (!NOT_PRINTABLE_ASCII.test(text)) return text.toLowerCase().split(/[^a-z0-9]+/u).filter((word) => word !== '');
  return foldText(text)
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
}
