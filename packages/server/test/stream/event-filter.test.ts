// The Filter header's language over price events: unit cases, then a property test of the
// compiled filter, and of the hub's subscriber index, against a plain reference evaluation.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildPriceEvent } from '@catalog/contract/testing';
import type { PriceEvent } from '../../src/catalog/model.ts';
import { InvalidFilter } from '../../src/catalog/errors.ts';
import type { StoredPriceEvent } from '../../src/prices/price-log.ts';
import { topicOf } from '../../src/prices/price-log.ts';
import { eventFieldsOf, filterFromHeader, parseEventFilter } from '../../src/stream/event-filter.ts';
import { FilteredSubscribers } from '../../src/stream/filtered-subscribers.ts';

const FC_SEED = Number(process.env['FC_SEED'] ?? 20261125);

const matches = (filter: string, event: PriceEvent): boolean => parseEventFilter(filter).matches(eventFieldsOf(JSON.stringify(event)));

describe('parseEventFilter', () => {
  const event = buildPriceEvent({ product_id: 'P-1', variant_id: 'v-1', sku: 'DD1391-100', size: '10.5', price: 150, market: 'US', source: 'marketplacea' });

  it('compares strings by the text rule and price as a number', () => {
    expect(matches('market = "us" AND sku = dd1391-100', event)).toBe(true);
    expect(matches('price < 150.5 AND price >= 150', event)).toBe(true);
    expect(matches('price > 150 OR NOT (size != "10.5")', event)).toBe(true);
    expect(matches('product_id IN ["p-2", P-1] AND source NOT IN [marketplaceb]', event)).toBe(true);
    expect(matches('currency != USD', event)).toBe(false);
  });

  it('narrows to ids when every match must carry one, and says when that is the whole filter', () => {
    expect(parseEventFilter('product_id IN [A, b]')).toMatchObject({ indexIsExact: true, index: new Map([['product_id', ['a', 'b']]]) });
    expect(parseEventFilter('sku = X OR variant_id = Y')).toMatchObject({ indexIsExact: true });
    expect(parseEventFilter('product_id = A AND price < 3')).toMatchObject({ indexIsExact: false, index: new Map([['product_id', ['a']]]) });
    expect(parseEventFilter('product_id = A OR price < 3').index).toBeNull();
    expect(parseEventFilter('NOT product_id = A').index).toBeNull();
  });

  it.each([
    ['price <', 'position 7: expected a value after "<"'],
    ['colour = red', 'unknown field "colour"; filterable fields are product_id, variant_id, sku, size, price, currency, source, market'],
    ['market < "US"', '"<" cannot compare "market", a string field'],
    ['price = cheap', '"price" needs a number'],
    [`product_id IN [${Array.from({ length: 1001 }, (_, i) => `p${i}`).join(',')}]`, 'more than 1000 values in all'],
    [`sku = "${'x'.repeat(8200)}"`, 'filter is 8208 bytes long; the limit is 8192'],
  ])('refuses %s with invalid_filter', (filter, message) => {
    expect(() => parseEventFilter(filter.slice(0, 9000))).toThrow(InvalidFilter);
    expect(() => parseEventFilter(filter)).toThrow(message);
  });

  it('accepts exactly 1,000 values and 8,192 bytes', () => {
    expect(() => parseEventFilter(`product_id IN [${Array.from({ length: 1000 }, (_, i) => `p${i}`).join(',')}]`)).not.toThrow();
    expect(() => parseEventFilter(`sku = "${'x'.repeat(8192 - 8)}"`)).not.toThrow();
  });

  it('refuses a header whose bytes are not UTF-8', () => {
    expect(() => filterFromHeader('size = "\xff"')).toThrow(InvalidFilter);
    expect(() => filterFromHeader('size = "\xff"')).toThrow('the Filter header is not valid UTF-8');
  });

  it('matches no condition, != and NOT IN included, on a field the event lacks or carries with another type', () => {
    const odd = eventFieldsOf(JSON.stringify({ product_id: 'p1', price: '12', sku: 7 }));
    expect(odd).toEqual({ product_id: 'p1' });
    for (const filter of ['price < 20', 'price != 5', 'sku != "a"', 'size != "10"', 'size NOT IN ["10"]', 'price NOT IN [5]']) {
      expect(parseEventFilter(filter).matches(odd), filter).toBe(false);
    }
    expect(parseEventFilter('product_id = P1').matches(odd)).toBe(true);
  });

  it('reads no fields from an event whose JSON is not an object', () => {
    for (const data of ['null', '42', '"p1"', 'not json']) expect(eventFieldsOf(data), data).toEqual({});
  });

  it('finds every value of an IN list given out of order and with repeats, and no other', () => {
    const listed = ['p-9', 'P-1', 'é', 'p-10', 'p-1', 'z', 'E', 'p-9'];
    const filter = parseEventFilter(`product_id IN [${listed.map((id) => JSON.stringify(id)).join(',')}]`);
    expect(filter.index).toEqual(new Map([['product_id', ['e', 'p-1', 'p-10', 'p-9', 'z', 'é']]]));
    for (const id of [...listed, 'Z']) expect(filter.matches({ product_id: id.toLowerCase() }), id).toBe(true);
    for (const id of ['p-2', 'p-0', 'a', 'zz', 'f', '']) expect(filter.matches({ product_id: id }), id).toBe(false);
    const prices = parseEventFilter('price IN [10, 9, 100, 9.5, 10]');
    for (const price of [9, 9.5, 10, 100]) expect(prices.matches({ price }), String(price)).toBe(true);
    for (const price of [1, 9.25, 11, 1000]) expect(prices.matches({ price }), String(price)).toBe(false);
    expect(parseEventFilter('sku = X OR sku IN [y, x]').index).toEqual(new Map([['sku', ['x', 'y']]]));
  });

  it('narrows a conjunction by the operand with the fewest ids, whichever comes first', () => {
    const fewest = new Map([['sku', ['x']]]);
    expect(parseEventFilter('product_id IN [a, b, c] AND sku = X').index).toEqual(fewest);
    expect(parseEventFilter('sku = X AND product_id IN [a, b, c]').index).toEqual(fewest);
  });

  it('runs the predicate for a disjunction of which one operand is narrowed but not exact', () => {
    const filter = parseEventFilter('product_id = a OR (product_id = b AND price < 10)');
    expect(filter.indexIsExact).toBe(false);
    const subscribers = new FilteredSubscribers<{ topics: ReadonlySet<string> }>();
    const subscriber = { topics: new Set(['price:marketplacea:us']) };
    subscribers.add(subscriber, filter);
    const delivered: number[] = [];
    const at = (id: number, price: number): StoredPriceEvent => ({ id, topic: 'price:marketplacea:us', data: JSON.stringify(buildPriceEvent({ product_id: 'b', price, source: 'marketplacea', market: 'US' })) });
    subscribers.forEachMatch(at(1, 20), () => delivered.push(1));
    subscribers.forEachMatch(at(2, 5), () => delivered.push(2));
    expect(delivered).toEqual([2]);
  });

  it('reads the header as UTF-8 bytes', () => {
    const header = Buffer.from('size = "½"', 'utf8').toString('latin1');
    expect(filterFromHeader(header)?.matches(eventFieldsOf(JSON.stringify({ ...event, size: '½' })))).toBe(true);
    expect(filterFromHeader(undefined)).toBeNull();
  });
});

// A filter as data, rendered to text, and evaluated the plain way: lower-cased strings, numbers as they are.
type Condition =
  | { kind: 'compare'; field: string; operator: string; value: string | number }
  | { kind: 'in'; field: string; values: (string | number)[]; negated: boolean }
  | { kind: 'not'; operand: Condition }
  | { kind: 'and' | 'or'; operands: Condition[] };

const STRING_VALUES: Record<string, string[]> = {
  product_id: ['p1', 'P2', 'p3'],
  variant_id: ['v1', 'v2'],
  sku: ['DD1391-100', 'dz5485-612'],
  size: ['10', '10.5'],
  currency: ['USD', 'eur'],
  source: ['marketplacea', 'marketplaceb'],
  market: ['US', 'nl', 'UK'],
};
const PRICES = [0, 49.5, 100, 150];

const condition: fc.Arbitrary<Condition> = fc.letrec<{ node: Condition }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(
      fc.constantFrom(...Object.keys(STRING_VALUES)).chain((field) =>
        fc.oneof(
          fc.record({ kind: fc.constant<'compare'>('compare'), field: fc.constant(field), operator: fc.constantFrom('=', '!='), value: fc.constantFrom(...STRING_VALUES[field]!) }),
          fc.record({ kind: fc.constant<'in'>('in'), field: fc.constant(field), values: fc.uniqueArray(fc.constantFrom(...STRING_VALUES[field]!), { minLength: 1 }), negated: fc.boolean() }),
        ),
      ),
      fc.record({ kind: fc.constant<'compare'>('compare'), field: fc.constant('price'), operator: fc.constantFrom('=', '!=', '<', '<=', '>', '>='), value: fc.constantFrom(...PRICES) }),
      fc.record({ kind: fc.constant<'in'>('in'), field: fc.constant('price'), values: fc.uniqueArray(fc.constantFrom(...PRICES), { minLength: 1 }), negated: fc.boolean() }),
    ),
    fc.record({ kind: fc.constant<'not'>('not'), operand: tie('node') }),
    fc.record({ kind: fc.constantFrom<'and' | 'or'>('and', 'or'), operands: fc.array(tie('node'), { minLength: 2, maxLength: 3 }) }),
  ),
})).node;

const literal = (value: string | number): string => (typeof value === 'number' ? String(value) : `"${value}"`);

function render(node: Condition): string {
  switch (node.kind) {
    case 'compare':
      return `${node.field} ${node.operator} ${literal(node.value)}`;
    case 'in':
      return `${node.field} ${node.negated ? 'NOT IN' : 'IN'} [${node.values.map(literal).join(', ')}]`;
    case 'not':
      return `NOT (${render(node.operand)})`;
    case 'and':
    case 'or':
      return node.operands.map((operand) => `(${render(operand)})`).join(node.kind === 'and' ? ' AND ' : ' OR ');
  }
}

function reference(node: Condition, event: PriceEvent): boolean {
  const own = (field: string): string | number => {
    const value = event[field as keyof PriceEvent];
    return typeof value === 'string' ? value.toLowerCase() : value;
  };
  const norm = (value: string | number): string | number => (typeof value === 'string' ? value.toLowerCase() : value);
  switch (node.kind) {
    case 'compare': {
      const [a, b] = [own(node.field), norm(node.value)];
      return { '=': a === b, '!=': a !== b, '<': a < b, '<=': a <= b, '>': a > b, '>=': a >= b }[node.operator] ?? false;
    }
    case 'in':
      return node.values.map(norm).includes(own(node.field)) !== node.negated;
    case 'not':
      return !reference(node.operand, event);
    case 'and':
      return node.operands.every((operand) => reference(operand, event));
    case 'or':
      return node.operands.some((operand) => reference(operand, event));
  }
}

const priceEvent: fc.Arbitrary<PriceEvent> = fc
  .record({
    product_id: fc.constantFrom(...STRING_VALUES['product_id']!),
    variant_id: fc.constantFrom(...STRING_VALUES['variant_id']!),
    sku: fc.constantFrom(...STRING_VALUES['sku']!),
    size: fc.constantFrom(...STRING_VALUES['size']!),
    price: fc.constantFrom(...PRICES),
    currency: fc.constantFrom('USD', 'EUR'),
    source: fc.constantFrom<PriceEvent['source'][]>('marketplacea', 'marketplaceb'),
    market: fc.constantFrom('US', 'NL', 'UK'),
  })
  .map((fields) => buildPriceEvent(fields));

describe('the Filter header against a plain reference evaluation', () => {
  it('matches exactly the events the reference matches (fast-check)', () => {
    fc.assert(
      fc.property(condition, fc.array(priceEvent, { minLength: 1, maxLength: 20 }), (node, events) => {
        const filter = parseEventFilter(render(node));
        for (const event of events) expect(filter.matches(eventFieldsOf(JSON.stringify(event))), `${render(node)} on ${JSON.stringify(event)}`).toBe(reference(node, event));
      }),
      { numRuns: 400, seed: FC_SEED },
    );
  });

  it('delivers each event once to exactly the subscribers whose topics and filter match, indexed or not (fast-check)', () => {
    const topics = ['price:marketplacea:us', 'price:marketplacea:nl', 'price:marketplaceb:us', 'price:marketplaceb:uk'];
    const subscriber = fc.record({ node: condition, topics: fc.uniqueArray(fc.constantFrom(...topics), { minLength: 1 }), leaves: fc.boolean() });
    fc.assert(
      fc.property(fc.array(subscriber, { minLength: 1, maxLength: 8 }), fc.array(priceEvent, { minLength: 1, maxLength: 20 }), (subscribers, events) => {
        const index = new FilteredSubscribers<{ topics: ReadonlySet<string>; node: Condition }>();
        const registered = subscribers.map(({ node, topics: subscribed }) => ({ topics: new Set(subscribed), node }));
        registered.forEach((s) => index.add(s, parseEventFilter(render(s.node))));
        // Some leave again: they must get nothing.
        const staying = registered.filter((s, i) => !subscribers[i]!.leaves || (index.delete(s), false));
        events.forEach((event, i) => {
          const stored: StoredPriceEvent = { id: i + 1, topic: topicOf(event), data: JSON.stringify(event) };
          const delivered: object[] = [];
          index.forEachMatch(stored, (s) => delivered.push(s));
          const expected = staying.filter((s) => s.topics.has(stored.topic) && reference(s.node, event));
          expect(delivered.length).toBe(expected.length);
          expect(new Set(delivered)).toEqual(new Set(expected));
        });
      }),
      { numRuns: 300, seed: FC_SEED },
    );
  });
});
