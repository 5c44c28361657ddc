// The filter language's syntax tree. The parser (parse-filter.ts) produces it already type-checked
// against the field table of its use (FILTER_FIELDS for the storefront's `filters`,
// PRICE_EVENT_FILTER_FIELDS for the stream's `Filter` header), so a store adapter compiles it to
// parameterised SQL, and the stream to a predicate, without re-checking.

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

/** The price event fields the stream's `Filter` header may name (documented in the AsyncAPI document). */
export const PRICE_EVENT_FILTER_FIELDS = {
  product_id: 'string',
  variant_id: 'string',
  sku: 'string',
  size: 'string',
  price: 'number',
  currency: 'string',
  source: 'string',
  market: 'string',
} as const satisfies Record<string, FieldType>;

export type PriceEventFilterField = keyof typeof PRICE_EVENT_FILTER_FIELDS;

/** One use of the language: the fields it may name and its limits. */
export interface FilterLanguage<F extends string> {
  fields: Readonly<Record<F, FieldType>>;
  /** The longest expression accepted, counted in `unit`. */
  maxLength: number;
  unit: 'characters' | 'bytes';
  /** The most literal values in all (a comparison counts one, an IN list its length). */
  maxValues: number;
}

export type CompareOperator = '=' | '!=' | '>' | '>=' | '<' | '<=';

/**
 * A literal after type-checking: strings for string and tag fields (compared case-insensitively),
 * numbers for numeric fields, booleans for `available`, and epoch milliseconds for timestamps.
 */
export type FilterLiteral = string | number | boolean;

export type FilterExpr<F extends string = FilterField> =
  | { type: 'and'; operands: FilterExpr<F>[] }
  | { type: 'or'; operands: FilterExpr<F>[] }
  | { type: 'not'; operand: FilterExpr<F> }
  | { type: 'compare'; field: F; operator: CompareOperator; value: FilterLiteral }
  | { type: 'in'; field: F; values: FilterLiteral[]; negated: boolean };

export const MAX_FILTER_LENGTH = 2000;
export const MAX_FILTER_DEPTH = 16;

export const STOREFRONT_FILTER: FilterLanguage<FilterField> = {
  fields: FILTER_FIELDS,
  maxLength: MAX_FILTER_LENGTH,
  unit: 'characters',
  maxValues: Number.POSITIVE_INFINITY,
};

/** The `Filter` header's limits (the AsyncAPI document's Filtering section). */
export const PRICE_EVENT_FILTER: FilterLanguage<PriceEventFilterField> = {
  fields: PRICE_EVENT_FILTER_FIELDS,
  maxLength: 8192,
  unit: 'bytes',
  maxValues: 1000,
};
