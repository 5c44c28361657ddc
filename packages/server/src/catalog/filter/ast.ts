// The filter language's syntax tree. The parser (parse-filter.ts) produces it already type-checked
// against FILTER_FIELDS, so a store adapter compiles it to parameterised SQL without re-checking.

export type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'timestamp' | 'tag';

/** The storefront fields a filter may name, with their types (documented in the OpenAPI description). */
export const FILTER_FIELDS = {
  cursor: 'integer',
  id: 'string',
  product_id: 'string',
  shop_name: 'string',
  brand: 'string',
  product_type: 'string',
  title: 'string',
  slug: 'string',
  price_min: 'number',
  price_max: 'number',
  price_display: 'number',
  available: 'boolean',
  tags: 'tag',
  created_at: 'timestamp',
  updated_at: 'timestamp',
  product_created_at: 'timestamp',
  product_published_at: 'timestamp',
} as const satisfies Record<string, FieldType>;

export type FilterField = keyof typeof FILTER_FIELDS;

export type CompareOperator = '=' | '!=' | '>' | '>=' | '<' | '<=';

/**
 * A literal after type-checking: strings for string and tag fields (compared case-insensitively),
 * numbers for numeric fields, booleans for `available`, and epoch milliseconds for timestamps.
 */
export type FilterLiteral = string | number | boolean;

export type FilterExpr =
  | { type: 'and'; operands: FilterExpr[] }
  | { type: 'or'; operands: FilterExpr[] }
  | { type: 'not'; operand: FilterExpr }
  | { type: 'compare'; field: FilterField; operator: CompareOperator; value: FilterLiteral }
  | { type: 'in'; field: FilterField; values: FilterLiteral[]; negated: boolean };

export const MAX_FILTER_LENGTH = 2000;
export const MAX_FILTER_DEPTH = 16;
