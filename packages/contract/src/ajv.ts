// The one Ajv set-up for the contract's schemas: JSON Schema 2020-12 (both documents are 3.x of
// OpenAPI/AsyncAPI on 2020-12), ajv-formats' formats, and the contract's own `iri`, which
// ajv-formats lacks. Every validator of the workspace (requests, imports, published events, the
// mock, tests) is made here, so a value means the same everywhere; callers only choose Ajv's
// reporting and coercion options.
// An `iri` is an absolute IRI (RFC 3987) as real feeds and browsers use them: a URL whose host,
// path, query or fragment may hold non-ASCII letters unescaped (`https://shop.example/stüssy`).
// Refused: no scheme, white space or control characters, the characters RFC 3987 excludes
// (`<>"{}|\^` and backtick), U+FFFD, and anything the WHATWG URL parser cannot read.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Options } from 'ajv';
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

/**
 * An Ajv that validates against the contract. `strict` is off by default: the documents carry
 * OpenAPI and AsyncAPI keywords (`example`, `discriminator`…) that are not JSON Schema.
 */
export function createContractAjv(options: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, ...options });
  addFormats(ajv);
  ajv.addFormat('iri', isIri);
  return ajv;
}
