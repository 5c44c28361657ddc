// The string formats the contract uses, for every Ajv instance that validates against it (request
// parameters, imported resources, responses in tests): ajv-formats' set plus `iri`, which it lacks.
// An `iri` is an absolute IRI (RFC 3987) as real feeds and browsers use them: a URL whose host,
// path, query or fragment may hold non-ASCII letters unescaped (`https://shop.example/stüssy`).
// Refused: no scheme, white space or control characters, the characters RFC 3987 excludes
// (`<>"{}|\^` and backtick), U+FFFD, and anything the WHATWG URL parser cannot read.
import type { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type AddFormats = (ajv: Ajv2020) => Ajv2020;
// ajv-formats ships CommonJS; depending on the loader its default export is the plugin or the module.
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/u;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused here
const EXCLUDED = /[\u0000-\u0020\u007f-\u009f<>"{}|\\^`\ufffd]/u;

export function isIri(text: string): boolean {
  if (!SCHEME.test(text) || EXCLUDED.test(text)) return false;
  return URL.canParse(text);
}

export function addContractFormats(ajv: Ajv2020): Ajv2020 {
  addFormats(ajv);
  ajv.addFormat('iri', isIri);
  return ajv;
}
