// JSON Schema validators for imported resources, compiled with Ajv (draft 2020-12, the dialect of
// OpenAPI 3.1) straight from the bundled contract, so import accepts exactly what the spec allows.
// Storefront lines may omit the service-assigned `cursor`, `created_at` and `updated_at`.
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { createContractAjv } from '@catalog/contract/ajv';
import { openapiDocument } from '@catalog/contract/documents';

export type ImportKind = 'catalog' | 'storefront';

const DOCUMENT_ID = 'https://catalog.example.com/openapi.json';
const SERVICE_ASSIGNED = new Set(['cursor', 'created_at', 'updated_at']);


function schemaOf(name: string): Record<string, unknown> {
  const components = openapiDocument.components as { schemas: Record<string, Record<string, unknown>> };
  const schema = components.schemas[name];
  if (schema === undefined) throw new Error(`the OpenAPI document has no schema "${name}"`);
  return schema;
}

let compiled: Record<ImportKind, ValidateFunction> | undefined;

/** Validators per import kind, compiled once per process. */
export function importValidators(): Record<ImportKind, ValidateFunction> {
  if (compiled !== undefined) return compiled;
  const ajv = createContractAjv({ strictNumbers: true, allErrors: false, validateFormats: true });
  ajv.addSchema({ ...openapiDocument, $id: DOCUMENT_ID });
  const storefront = schemaOf('StorefrontProduct');
  const storefrontInput = {
    ...storefront,
    required: (storefront.required as string[]).filter((field) => !SERVICE_ASSIGNED.has(field)),
  };
  compiled = {
    catalog: ajv.compile({ $id: `${DOCUMENT_ID}/catalog-input`, ...(rewriteRefs(schemaOf('CatalogProductPro')) as Record<string, unknown>) }),
    storefront: ajv.compile({ $id: `${DOCUMENT_ID}/storefront-input`, ...(rewriteRefs(storefrontInput) as Record<string, unknown>) }),
  };
  return compiled;
}

/** Points local `#/components/...` references of a copied fragment back at the whole document. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        key === '$ref' && typeof inner === 'string' && inner.startsWith('#/') ? `${DOCUMENT_ID}${inner}` : rewriteRefs(inner),
      ]),
    );
  }
  return value;
}

/** One readable sentence for the first schema violation, e.g. `/variants/0/gtin must match pattern "^[0-9]+$"`. */
export function describeViolation(errors: readonly ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (first === undefined) return 'does not match the schema';
  const where = first.instancePath === '' ? 'the product' : first.instancePath;
  let detail = first.message ?? 'is invalid';
  if (first.keyword === 'additionalProperties') {
    detail = `has a property the schema does not allow: "${String(first.params.additionalProperty)}"`;
  } else if (first.keyword === 'enum' || first.keyword === 'const') {
    detail = `${detail} (${JSON.stringify(first.params.allowedValues ?? first.params.allowedValue)})`;
  }
  return `${where} ${detail}`;
}
