// The `iri` string format of the contract (RFC 3987): an absolute IRI, i.e. a URI that may also hold
// any non-ASCII letter, unescaped, in its host, path, query or fragment (`https://shop.example/stüssy`,
// `https://東京.example/靴`). Real feeds carry such links and browsers follow them, so import keeps
// them exactly as given. Refused: no scheme, whitespace or control characters, the characters RFC 3987
// excludes (`<>"{}|\^` and backtick), and anything the WHATWG URL parser cannot read.
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused here
const EXCLUDED = /[\u0000-\u0020\u007f-\u009f<>"{}|\\^`\ufffd]/u;

/** True when `value` is an absolute IRI (see the module header). */
export function isIri(value: string): boolean {
  if (!SCHEME.test(value) || EXCLUDED.test(value)) return false;
  return URL.canParse(value);
}
