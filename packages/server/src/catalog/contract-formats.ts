// The string formats the contract uses, for every Ajv instance that validates against it (request
// parameters, imported resources, responses in tests): ajv-formats' set plus `iri`, which it lacks.
// An `iri` is an absolute IRI (RFC 3987) as real feeds and browsers use them: a URL whose path or
// host may hold non-ASCII letters (`https://shop.example/stüssy-8-ball`), with no white space or
// control characters. What the WHATWG URL parser accepts with a scheme is taken as the rule.
import type { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type AddFormats = (ajv: Ajv2020) => Ajv2020;
// ajv-formats ships CommonJS; depending on the loader its default export is the plugin or the module.
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

export function isIri(text: string): boolean {
  if (/\s/u.test(text) || !/^[a-z][a-z0-9+.-]*:/iu.test(text)) return false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return false;
  }
  return URL.canParse(text);
}

export function addContractFormats(ajv: Ajv2020): Ajv2020 {
  addFormats(ajv);
  ajv.addFormat('iri', isIri);
  return ajv;
}
