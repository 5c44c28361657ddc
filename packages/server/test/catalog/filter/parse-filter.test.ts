import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidFilter } from '../../../src/catalog/errors.ts';
import { PRICE_EVENT_FILTER, type FilterExpr } from '../../../src/catalog/filter/ast.ts';
import { parseFilter, tokenize } from '../../../src/catalog/filter/parse-filter.ts';

function refusal(text: string): { position: number; message: string } {
  try {
    parseFilter(text);
  } catch (error) {
    if (error instanceof InvalidFilter) return { position: error.position, message: error.message };
    throw error;
  }
  throw new Error(`"${text}" was accepted`);
}

describe('parseFilter', () => {
  describe('accepts', () => {
    const cases: [string, FilterExpr][] = [
      ['shop_name = "Sneaker Hub"', { type: 'compare', field: 'shop_name', operator: '=', value: 'Sneaker Hub' }],
      ["brand = 'Nike'", { type: 'compare', field: 'brand', operator: '=', value: 'Nike' }],
      ['brand = Nike', { type: 'compare', field: 'brand', operator: '=', value: 'Nike' }],
      ['title = "say \\"hi\\" \\\\ ok"', { type: 'compare', field: 'title', operator: '=', value: 'say "hi" \\ ok' }],
      ["title = 'it\\'s'", { type: 'compare', field: 'title', operator: '=', value: "it's" }],
      ['product_id = 7741029384721', { type: 'compare', field: 'product_id', operator: '=', value: '7741029384721' }],
      ['price_min >= 100', { type: 'compare', field: 'price_min', operator: '>=', value: 100 }],
      ['price_max<-1.5', { type: 'compare', field: 'price_max', operator: '<', value: -1.5 }],
      ['price_display != 0.25', { type: 'compare', field: 'price_display', operator: '!=', value: 0.25 }],
      ['price_min > "12"', { type: 'compare', field: 'price_min', operator: '>', value: 12 }],
      ['available = true', { type: 'compare', field: 'available', operator: '=', value: true }],
      ['available = FALSE', { type: 'compare', field: 'available', operator: '=', value: false }],
      ['cursor > 17000000000001536', { type: 'compare', field: 'cursor', operator: '>', value: 17000000000001536 }],
      ['tags = COLOR_White', { type: 'compare', field: 'tags', operator: '=', value: 'COLOR_White' }],
      ['updated_at >= 2026-01-01', { type: 'compare', field: 'updated_at', operator: '>=', value: Date.UTC(2026, 0, 1) }],
      [
        'created_at < "2026-01-01T10:00:00.5+02:00"',
        { type: 'compare', field: 'created_at', operator: '<', value: Date.UTC(2026, 0, 1, 8, 0, 0, 500) },
      ],
      ['product_published_at = 2025-03-02T08:30:00', { type: 'compare', field: 'product_published_at', operator: '=', value: Date.UTC(2025, 2, 2, 8, 30) }],
      ['updated_at >= "2026-01-01 10:00:00"', { type: 'compare', field: 'updated_at', operator: '>=', value: Date.UTC(2026, 0, 1, 10) }],
      ['updated_at >= 2026-01-01t10:00:00z', { type: 'compare', field: 'updated_at', operator: '>=', value: Date.UTC(2026, 0, 1, 10) }],
      ['updated_at >= 2026-01-01T10:00:00+0200', { type: 'compare', field: 'updated_at', operator: '>=', value: Date.UTC(2026, 0, 1, 8) }],
      ['updated_at >= 2026-01-01T10:00:00.123+02:00', { type: 'compare', field: 'updated_at', operator: '>=', value: Date.UTC(2026, 0, 1, 8, 0, 0, 123) }],
      // Beyond milliseconds the fraction is truncated, not rounded.
      ['updated_at >= 2026-01-01T10:00:00.123987654Z', { type: 'compare', field: 'updated_at', operator: '>=', value: Date.UTC(2026, 0, 1, 10, 0, 0, 123) }],
      ['cursor >= -9223372036854775808', { type: 'compare', field: 'cursor', operator: '>=', value: -9223372036854775808 }],
      ['brand IN ["Nike", \'Jordan\', Adidas]', { type: 'in', field: 'brand', values: ['Nike', 'Jordan', 'Adidas'], negated: false }],
      ['brand not in [Adidas]', { type: 'in', field: 'brand', values: ['Adidas'], negated: true }],
      ['price_min IN [1, 2.5]', { type: 'in', field: 'price_min', values: [1, 2.5], negated: false }],
      ['brand != Nike', { type: 'compare', field: 'brand', operator: '!=', value: 'Nike' }],
      ['tags != COLOR_White', { type: 'compare', field: 'tags', operator: '!=', value: 'COLOR_White' }],
      ['available != false', { type: 'compare', field: 'available', operator: '!=', value: false }],
      // U+0080 is not whitespace: it belongs to the word, as any character but the ASCII breaks.
      ['brand = a\u0080b', { type: 'compare', field: 'brand', operator: '=', value: 'a\u0080b' }],
    ];
    for (const [text, expected] of cases) {
      it(`parses ${text}`, () => {
        expect(parseFilter(text)).toStrictEqual(expected);
      });
    }

    it('binds AND tighter than OR', () => {
      expect(parseFilter('brand = a OR brand = b AND available = true')).toStrictEqual({
        type: 'or',
        operands: [
          { type: 'compare', field: 'brand', operator: '=', value: 'a' },
          {
            type: 'and',
            operands: [
              { type: 'compare', field: 'brand', operator: '=', value: 'b' },
              { type: 'compare', field: 'available', operator: '=', value: true },
            ],
          },
        ],
      });
    });

    it('honours parentheses, NOT and lowercase keywords', () => {
      expect(parseFilter('not (brand = a or brand = b) and price_min > 1')).toStrictEqual({
        type: 'and',
        operands: [
          {
            type: 'not',
            operand: {
              type: 'or',
              operands: [
                { type: 'compare', field: 'brand', operator: '=', value: 'a' },
                { type: 'compare', field: 'brand', operator: '=', value: 'b' },
              ],
            },
          },
          { type: 'compare', field: 'price_min', operator: '>', value: 1 },
        ],
      });
    });

    it('reads a date-time without a zone as UTC, whatever the time zone of the server', () => {
      const zone = process.env['TZ'];
      process.env['TZ'] = 'America/New_York';
      try {
        expect(parseFilter('updated_at >= 2026-01-01T10:00:00')).toStrictEqual({ type: 'compare', field: 'updated_at', operator: '>=', value: Date.UTC(2026, 0, 1, 10) });
        expect(parseFilter('updated_at >= 2026-01-01T10:00:00.123Z')).toStrictEqual({ type: 'compare', field: 'updated_at', operator: '>=', value: Date.UTC(2026, 0, 1, 10, 0, 0, 123) });
      } finally {
        if (zone === undefined) delete process.env['TZ'];
        else process.env['TZ'] = zone;
      }
    });

    it('accepts keywords as values when quoted', () => {
      expect(parseFilter('title = "AND"')).toStrictEqual({ type: 'compare', field: 'title', operator: '=', value: 'AND' });
    });

    it('accepts 16 levels of nesting', () => {
      expect(() => parseFilter(`${'('.repeat(16)}brand = a${')'.repeat(16)}`)).not.toThrow();
    });

    it('accepts a filter of exactly 2,000 characters', () => {
      const text = `title = "${'x'.repeat(2000 - 10)}"`;
      expect(text).toHaveLength(2000);
      expect(() => parseFilter(text)).not.toThrow();
    });

    it('counts the storefront limit in characters, not bytes', () => {
      const text = `title = "${'é'.repeat(2000 - 10)}"`;
      expect(Buffer.byteLength(text)).toBeGreaterThan(2000);
      expect(parseFilter(text)).toStrictEqual({ type: 'compare', field: 'title', operator: '=', value: 'é'.repeat(1990) });
    });
  });

  describe('refuses', () => {
    const cases: [string, number, string][] = [
      ['shop_name =', 11, 'expected a value after "="'],
      ['', 1, 'expected a filter expression'],
      ['   ', 1, 'expected a filter expression'],
      ['colour = red', 1, 'unknown field "colour"; filterable fields are cursor, id, product_id, shop_name'],
      ['brand = "Nike', 9, 'unterminated string'],
      ["brand = 'Nike\\'", 9, 'unterminated string'],
      ['price_min = cheap', 13, '"price_min" needs a number, got "cheap"'],
      ['price_min > 1e999', 13, '"price_min" needs a number, got "1e999"'],
      ['available = yes', 13, '"available" needs true or false, got "yes"'],
      ['cursor > 1.5', 10, '"cursor" needs an integer, got "1.5"'],
      ['cursor > 17000000000000001', 10, 'cannot be represented exactly'],
      ['updated_at > yesterday', 14, '"updated_at" needs an ISO 8601 date or date-time, got "yesterday"'],
      ['updated_at > 2026-02-31', 14, 'needs an ISO 8601 date'],
      ['updated_at > 2026-02-30T10:00:00Z', 14, 'needs an ISO 8601 date'],
      ['updated_at > 2026-01-01T25:00:00Z', 14, 'needs an ISO 8601 date'],
      ['brand > Nike', 7, '">" cannot compare "brand", a string field; use =, != or IN'],
      ['tags <= x', 6, '"<=" cannot compare "tags"'],
      ['available < true', 11, '"<" cannot compare "available", a boolean field'],
      ['brand = Nike AND', 17, 'expected a field name, got the end of the filter'],
      ['brand = Nike brand = Adidas', 14, 'expected AND, OR or the end of the filter, got "brand"'],
      ['brand = Nike)', 13, 'unmatched ")"'],
      ['(brand = Nike', 14, 'expected ")" to close the "(" at position 1'],
      ['()', 2, 'empty parentheses'],
      ['brand Nike', 7, 'expected an operator (=, !=, >, >=, <, <=, IN or NOT IN) after "brand", got "Nike"'],
      ['brand NOT Nike', 11, 'expected IN after NOT after "brand"'],
      ['brand IN Nike', 10, 'expected "[" after IN, got "Nike"'],
      ['brand IN []', 11, 'the list after IN is empty'],
      ['brand IN [a b]', 13, 'expected "," or "]" in the list, got "b"'],
      ['brand IN [a,', 13, 'expected a value in the list, got the end of the filter'],
      ['brand = = x', 9, 'expected a value after "=", got "="'],
      ['brand ! x', 7, 'unexpected "!"'],
      ['brand = AND', 9, 'expected a value after "="'],
      ['= x', 1, 'expected a field name, got "="'],
      ['brand = Nike "Adidas"', 14, 'expected AND, OR or the end of the filter, got the string "Adidas"'],
      ['brand = Nike [', 14, 'expected AND, OR or the end of the filter, got "["'],
      ['brand = Nike (', 14, 'expected AND, OR or the end of the filter, got "("'],
      ['brand = Nike AND )', 18, 'expected a field name, got ")"'],
      ['brand IN (a)', 10, 'expected "[" after IN, got "("'],
      ['brand IN [,a]', 11, 'expected a value in the list, got ","'],
      ['brand IN [a,]', 13, 'expected a value in the list, got "]"'],
      ['updated_at > 2026-01-01T10:00:00.1234567890Z', 14, 'needs an ISO 8601 date'],
      ['cursor > 9223372036854775808', 10, '"cursor" value 9223372036854775808 is out of range'],
      ['cursor > -9223372036854775809', 10, '"cursor" value -9223372036854775809 is out of range'],
      ['cursor > 9223372036854775807', 10, '"cursor" value 9223372036854775807 cannot be represented exactly'],
      ['cursor > 100000000000000000000000', 10, '"cursor" value 100000000000000000000000 is out of range'],
      ['cursor > 1000000000000000000000000', 10, '"cursor" value 10000000000000000000… (25 digits) is out of range'],
      ['price_min = 123456789012345678901234x', 13, '"price_min" needs a number, got "12345678901234567890… (25 digits)"'],

      ['price_min IN [1, x]', 18, '"price_min" needs a number, got "x"'],
    ];
    for (const [text, position, problem] of cases) {
      it(`"${text}" at position ${position}: ${problem}`, () => {
        const { position: actual, message } = refusal(text);
        expect(message).toContain(problem);
        expect(message).toContain(`position ${position}:`);
        expect(actual).toBe(position);
      });
    }

    it('refuses filters over 2,000 characters', () => {
      const { position, message } = refusal(`title = "${'x'.repeat(2000)}"`);
      expect(position).toBe(2001);
      expect(message).toContain('the limit is 2000');
    });

    it('refuses nesting deeper than 16 levels, at the opening parenthesis that exceeds it', () => {
      const { position, message } = refusal(`${'('.repeat(17)}brand = a${')'.repeat(17)}`);
      expect(position).toBe(17);
      expect(message).toContain('nested deeper than 16 levels');
      expect(refusal(`${'NOT '.repeat(17)}brand = a`).position).toBe(65);
    });
  });
});

/**
 * The tokenizer's rules written plainly (a regular expression per character, strings built a
 * character at a time): what the single-pass tokenizer must give, token for token and refusal for
 * refusal.
 */
function plainTokens(text: string): { kind: string; text: string; position: number; keyword: string | null }[] | { position: number; message: string } {
  const tokens: { kind: string; text: string; position: number; keyword: string | null }[] = [];
  const push = (kind: string, value: string, position: number): void => {
    const upper = value.toUpperCase();
    tokens.push({ kind, text: value, position, keyword: kind === 'word' && ['AND', 'OR', 'NOT', 'IN'].includes(upper) ? upper : null });
  };
  let i = 0;
  while (i < text.length) {
    const char = text.charAt(i);
    const position = i + 1;
    if (/\s/u.test(char)) i += 1;
    else if ('()[],'.includes(char)) {
      push(char, char, position);
      i += 1;
    } else if (char === '=') {
      push('operator', '=', position);
      i += 1;
    } else if (char === '!' || char === '<' || char === '>') {
      if (text.charAt(i + 1) === '=') {
        push('operator', `${char}=`, position);
        i += 2;
      } else if (char === '!') return { position, message: 'unexpected "!"' };
      else {
        push('operator', char, position);
        i += 1;
      }
    } else if (char === '"' || char === "'") {
      let value = '';
      let j = i + 1;
      for (;;) {
        if (j >= text.length) return { position, message: 'unterminated string' };
        const c = text.charAt(j);
        if (c === '\\') {
          if (j + 1 >= text.length) return { position, message: 'unterminated string' };
          value += text.charAt(j + 1);
          j += 2;
        } else if (c === char) {
          j += 1;
          break;
        } else {
          value += c;
          j += 1;
        }
      }
      push('string', value, position);
      i = j;
    } else {
      let j = i;
      while (j < text.length && !/[\s()[\],=!<>"']/u.test(text.charAt(j))) j += 1;
      push('word', text.slice(i, j), position);
      i = j;
    }
  }
  push('end', '', text.length + 1);
  return tokens;
}

describe('tokenize', () => {
  const UNITS = ['a', 'N', 'd', 'o', 'R', 'i', 'ı', 'ß', 't', '1', '.', '-', '_', ' ', '\t', '\n', '\u007f', '\u0080', '\u00a0', '\u2028', '\u3000', '(', ')', '[', ']', ',', '=', '!', '<', '>', '"', "'", '\\', 'é', '😀', '\ud800'];

  it('gives the tokens and refusals of the plain rules for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...UNITS), maxLength: 40 }), (text) => {
        const expected = plainTokens(text);
        let actual: ReturnType<typeof plainTokens>;
        try {
          actual = tokenize(text);
        } catch (error) {
          if (!(error instanceof InvalidFilter)) throw error;
          expect(expected).toMatchObject({ position: error.position });
          expect(error.message).toContain((expected as { message: string }).message);
          return;
        }
        expect(actual).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseFilter for the price stream (PRICE_EVENT_FILTER)', () => {
  function refusalOf(text: string): InvalidFilter {
    try {
      parseFilter(text, PRICE_EVENT_FILTER);
    } catch (error) {
      if (error instanceof InvalidFilter) return error;
      throw error;
    }
    throw new Error('accepted');
  }
  const list = (count: number): string => `sku IN [${Array.from({ length: count }, (_, i) => `s${i}`).join(',')}]`;

  it('takes 1,000 values in all, an IN list counting its length and a comparison one', () => {
    expect(parseFilter(list(1000), PRICE_EVENT_FILTER)).toMatchObject({ type: 'in', field: 'sku', negated: false });
    expect(parseFilter(`${list(999)} AND price >= 10`, PRICE_EVENT_FILTER)).toMatchObject({ type: 'and' });
  });

  it('refuses the 1,001st value where it stands, in a list or in a comparison', () => {
    const long = list(1001);
    const inList = refusalOf(long);
    expect(inList.position).toBe(long.indexOf('s1000') + 1);
    expect(inList.message).toBe(`Invalid filter at position ${inList.position}: more than 1000 values in all`);
    const text = `${list(1000)} AND price >= 10`;
    expect(refusalOf(text).position).toBe(text.indexOf('10', text.indexOf('price')) + 1);
    expect(refusalOf(`price = 1 OR ${list(1000)}`).position).toBe(`price = 1 OR ${list(1000)}`.indexOf('s999') + 1);
  });

  it('counts its limit of 8,192 in UTF-8 bytes, not characters', () => {
    const within = `sku = "${'é'.repeat((8192 - 8) / 2)}"`;
    expect(Buffer.byteLength(within)).toBe(8192);
    expect(parseFilter(within, PRICE_EVENT_FILTER)).toMatchObject({ type: 'compare', field: 'sku' });
    const beyond = `sku = "${'é'.repeat((8192 - 8) / 2)}x"`;
    const refusal = refusalOf(beyond);
    expect(refusal.message).toContain('filter is 8193 bytes long; the limit is 8192');
    expect(refusal.position).toBe(beyond.length);
  });
});
