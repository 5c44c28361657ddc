// The stream's `Filter` header: an expression of the filter language (catalog/filter, the
// storefront's `filters` grammar with the price event's field table and limits) compiled into a
// predicate over a price event, plus what the hub indexes it by.
//
// Semantics (the AsyncAPI document's Filtering section): string fields compare by the text rule
// (catalog/text.ts: `market = "us"` matches `US`), `price` as a number; `!=` and `NOT IN` are the
// negations of `=` and `IN`; an event that lacks a field (not a valid PriceEvent) matches no
// comparison on it. `index` is a set of id values at least one of which every matching event has:
// the hub looks subscribers up by an event's ids instead of evaluating every filter on every event.
import { InvalidFilter } from '../catalog/errors.ts';
import { PRICE_EVENT_FILTER, type FilterExpr, type FilterLiteral, type PriceEventFilterField } from '../catalog/filter/ast.ts';
import { parseFilter } from '../catalog/filter/parse-filter.ts';
import { foldText } from '../catalog/text.ts';

export { InvalidFilter };

/** The fields events are indexed by in the hub: an event has one value of each. */
export const INDEXED_FIELDS = ['product_id', 'variant_id', 'sku'] as const;
export type IndexedField = (typeof INDEXED_FIELDS)[number];

/** A price event's fields as the predicate reads them: strings already folded. */
export type EventFields = Partial<Record<PriceEventFilterField, string | number>>;

/**
 * A compiled filter. It keeps neither the header's text nor the parsed expression: a subscriber's
 * filter lives as long as its stream, and the request already holds the header.
 */
export interface EventFilter {
  readonly matches: (fields: EventFields) => boolean;
  /**
   * Folded id values by field, each list sorted and without repeats: every event the filter
   * matches has one of them; null when the filter does not narrow to ids (it is then evaluated on
   * every event of its topics).
   */
  readonly index: ReadonlyMap<IndexedField, readonly string[]> | null;
  /** True when matching one of `index`'s values is the whole filter (no predicate to run after the look-up). */
  readonly indexIsExact: boolean;
}

/** Parses and compiles a `Filter` header; throws InvalidFilter (400 `invalid_filter`). */
export function parseEventFilter(text: string): EventFilter {
  const expr = parseFilter(text, PRICE_EVENT_FILTER);
  const values = new FoldedValues();
  const narrowed = indexOf(expr, values);
  return { matches: compile(expr, values), index: narrowed?.keys ?? null, indexIsExact: narrowed?.exact ?? false };
}

/** The header as received: Node reads header bytes as Latin-1, the contract sends UTF-8. */
export function filterFromHeader(header: string | undefined): EventFilter | null {
  if (header === undefined) return null;
  const text = Buffer.from(header, 'latin1').toString('utf8');
  if (text.includes('\uFFFD') && !header.includes('\uFFFD')) throw new InvalidFilter(1, 'the Filter header is not valid UTF-8');
  return parseEventFilter(text);
}

/** The fields of an event's JSON text, strings folded once for every filter that reads them. */
export function eventFieldsOf(data: string): EventFields {
  return eventFieldsOfPayload(eventPayloadOf(data));
}

/** An event's JSON text parsed, or null when it is not a JSON object (such an event matches no comparison). */
export function eventPayloadOf(data: string): Readonly<Record<string, unknown>> | null {
  let payload: unknown;
  try {
    payload = JSON.parse(data);
  } catch {
    return null;
  }
  return typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : null;
}

const FIELD_TYPES = Object.entries(PRICE_EVENT_FILTER.fields) as [PriceEventFilterField, string][];

/** eventFieldsOf for a payload already parsed (eventPayloadOf). */
export function eventFieldsOfPayload(payload: Readonly<Record<string, unknown>> | null): EventFields {
  const fields: EventFields = {};
  if (payload === null) return fields;
  for (const [name, type] of FIELD_TYPES) {
    const value = payload[name];
    if (type === 'number' ? typeof value === 'number' : typeof value === 'string') {
      fields[name] = typeof value === 'string' ? foldText(value) : (value as number);
    }
  }
  return fields;
}

type Expr = FilterExpr<PriceEventFilterField>;

const literalOf = (value: FilterLiteral): string | number => (typeof value === 'string' ? foldText(value) : (value as number));

/** Never holds a property: storing a key in it and deleting it again is what shared() needs. */
const INTERNED: Record<string, number> = Object.create(null) as Record<string, number>;

/**
 * The engine's one copy of `text`: V8 stores a property name once, in a table that forgets names
 * nothing uses any more, and turns the string it was given into a reference to that copy. An id
 * that thousands of filters list is then held once, not once per filter (with its tokenizer
 * scaffolding); equality is unchanged. The object is a dictionary (its prototype is null), so
 * storing a key adds no hidden class, as it would to an object literal for every distinct id.
 */
function shared(text: string): string {
  INTERNED[text] = 0;
  delete INTERNED[text];
  return text;
}

/** Ascending by `<` (UTF-16 code units for strings), without repeats: what includesSorted() searches. */
function sortedUnique<T extends string | number>(values: Iterable<T>): T[] {
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let kept = 0;
  for (const value of sorted) if (kept === 0 || sorted[kept - 1] !== value) sorted[kept++] = value;
  sorted.length = kept;
  return sorted;
}

/** Whether `sorted` (sortedUnique's order) holds `value`: a binary search. */
function includesSorted(sorted: readonly (string | number)[], value: string | number): boolean {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = sorted[middle] as string | number;
    if (at === value) return true;
    if (at < value) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}

/**
 * Each `IN` list's folded values, made once per filter: the predicate and the index hold the same
 * array of the same strings. A subscriber's filter lives as long as its stream, and every major
 * collection marks it: its lists are sorted arrays (smaller than Sets), each held once.
 */
class FoldedValues {
  readonly #byList = new Map<Expr, (string | number)[]>();

  of(expr: Extract<Expr, { type: 'in' }>): (string | number)[] {
    let values = this.#byList.get(expr);
    if (values === undefined) {
      // A list's values all have its field's type: strings and numbers are never compared.
      values = sortedUnique(expr.values.map((value) => (typeof value === 'string' ? shared(foldText(value)) : (value as number))));
      this.#byList.set(expr, values);
    }
    return values;
  }
}

/** Not a closure over `folded`: the predicates must not keep it (and through it the parsed expression) alive. */
function compileAll(operands: readonly Expr[], folded: FoldedValues): ((fields: EventFields) => boolean)[] {
  const compiled: ((fields: EventFields) => boolean)[] = [];
  for (const operand of operands) compiled.push(compile(operand, folded));
  return compiled;
}

function compile(expr: Expr, folded: FoldedValues): (fields: EventFields) => boolean {
  switch (expr.type) {
    case 'and': {
      const operands = compileAll(expr.operands, folded);
      return (fields) => operands.every((operand) => operand(fields));
    }
    case 'or': {
      const operands = compileAll(expr.operands, folded);
      return (fields) => operands.some((operand) => operand(fields));
    }
    case 'not': {
      const operand = compile(expr.operand, folded);
      return (fields) => !operand(fields);
    }
    case 'in': {
      const values = folded.of(expr);
      const { field, negated } = expr;
      return (fields) => {
        const value = fields[field];
        return value !== undefined && includesSorted(values, value) !== negated;
      };
    }
    case 'compare': {
      const { field, operator } = expr;
      const literal = literalOf(expr.value);
      return (fields) => {
        const value = fields[field];
        if (value === undefined) return false;
        switch (operator) {
          case '=':
            return value === literal;
          case '!=':
            return value !== literal;
          case '<':
            return value < literal;
          case '<=':
            return value <= literal;
          case '>':
            return value > literal;
          case '>=':
            return value >= literal;
        }
      };
    }
  }
}

interface Narrowing {
  keys: Map<IndexedField, readonly string[]>;
  exact: boolean;
}

const isIndexed = (field: string): field is IndexedField => (INDEXED_FIELDS as readonly string[]).includes(field);

const sizeOf = (keys: Map<IndexedField, readonly string[]>): number => [...keys.values()].reduce((total, values) => total + values.length, 0);

/** The id values an expression narrows to (see EventFilter.index), or null. */
function indexOf(expr: Expr, folded: FoldedValues): Narrowing | null {
  switch (expr.type) {
    case 'compare':
      if (expr.operator !== '=' || !isIndexed(expr.field)) return null;
      return { keys: new Map([[expr.field, [shared(literalOf(expr.value) as string)]]]), exact: true };
    case 'in':
      if (expr.negated || !isIndexed(expr.field)) return null;
      // An indexed field is a string field: its folded values are strings.
      return { keys: new Map([[expr.field, folded.of(expr) as string[]]]), exact: true };
    case 'and': {
      // Any operand's ids narrow the conjunction; the fewest make the fewest look-ups.
      let best: Narrowing | null = null;
      for (const operand of expr.operands) {
        const narrowed = indexOf(operand, folded);
        if (narrowed !== null && (best === null || sizeOf(narrowed.keys) < sizeOf(best.keys))) best = narrowed;
      }
      return best === null ? null : { keys: best.keys, exact: false };
    }
    case 'or': {
      const merged = new Map<IndexedField, string[]>();
      let exact = true;
      for (const operand of expr.operands) {
        const narrowed = indexOf(operand, folded);
        if (narrowed === null) return null;
        exact &&= narrowed.exact;
        for (const [field, values] of narrowed.keys) {
          const into = merged.get(field) ?? [];
          into.push(...values);
          merged.set(field, into);
        }
      }
      return { keys: new Map([...merged].map(([field, values]) => [field, sortedUnique(values)])), exact };
    }
    case 'not':
      return null;
  }
}
