// http/query-string.ts on its own: what every operation's query becomes before validation, and
// the one message a client gets for each way a query string can be malformed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequest } from '../../src/catalog/errors.ts';
import { assertNoProblem, controlCharacterIn, parseQueryString, searchOf } from '../../src/http/query-string.ts';

describe('parseQueryString', () => {
  it('decodes each parameter once, + as a space and percent-escapes as UTF-8', () => {
    expect(parseQueryString('query=caf%C3%A9+au+lait&limit=20&empty=&flag&size=L+XL')).toEqual({
      values: { query: 'café au lait', limit: '20', empty: '', flag: '', size: 'L XL' },
      problem: null,
    });
  });

  it('returns no values and no problem for an empty query string or empty parts', () => {
    expect(parseQueryString('')).toEqual({ values: {}, problem: null });
    expect(parseQueryString('&&a=1&')).toEqual({ values: { a: '1' }, problem: null });
  });

  it('keeps an = inside a value', () => {
    expect(parseQueryString('filters=price_min%20%3E%3D%20100&x=a=b').values).toEqual({ filters: 'price_min >= 100', x: 'a=b' });
  });

  it('keeps a parameter named like an Object.prototype member as a parameter', () => {
    const parsed = parseQueryString('__proto__=x&constructor=y');
    expect(Object.entries(parsed.values)).toEqual([['__proto__', 'x'], ['constructor', 'y']]);
    // Nothing is inherited: a name the request did not send reads as absent.
    expect(parseQueryString('a=1').values['toString']).toBeUndefined();
    expect(Object.entries({ ...parsed.values })).toEqual([['__proto__', 'x'], ['constructor', 'y']]);
    expect(parseQueryString('__proto__=1&__proto__=2').problem).toBe('Query parameter "__proto__" was given more than once; give it once.');
  });

  it('refuses a repeated parameter, naming it, and keeps its first value', () => {
    const parsed = parseQueryString('limit=1&limit=2');
    expect(parsed.values).toEqual({ limit: '1' });
    expect(parsed.problem).toBe('Query parameter "limit" was given more than once; give it once.');
  });

  it('counts a parameter repeated under another spelling of the same name as repeated', () => {
    expect(parseQueryString('limit=1&%6Cimit=2').problem).toBe('Query parameter "limit" was given more than once; give it once.');
  });

  it('refuses broken percent-encoding in a value or a name, quoting the part', () => {
    const parsed = parseQueryString('a=1&query=%E0%A4%A&b=2');
    expect(parsed.values).toEqual({ a: '1', b: '2' });
    expect(parsed.problem).toBe('The query string has malformed percent-encoding near "query=%E0%A4%A".');
    expect(parseQueryString('qu%E0ry=1').problem).toBe('The query string has malformed percent-encoding near "qu%E0ry=1".');
  });

  it('refuses a control character in a value or a name, naming its code point and position', () => {
    expect(parseQueryString('query=ab%00c').problem).toBe('Query parameter "query" contains the control character U+0000 at position 3; remove it.');
    expect(parseQueryString('qu%0Ary=1').problem).toBe('Query parameter "qu?ry" contains the control character U+000A at position 3; remove it.');
  });

  it('reports the first problem of several', () => {
    expect(parseQueryString('a=%ZZ&b=1&b=2').problem).toBe('The query string has malformed percent-encoding near "a=%ZZ".');
  });

  it('truncates a long name in its message to 60 characters', () => {
    const name = 'n'.repeat(100);
    expect(parseQueryString(`${name}=1&${name}=2`).problem).toBe(`Query parameter "${'n'.repeat(60)}…" was given more than once; give it once.`);
    const whole = 'w'.repeat(60);
    expect(parseQueryString(`${whole}=1&${whole}=2`).problem).toBe(`Query parameter "${whole}" was given more than once; give it once.`);
  });

  it('reads back every set of distinct printable parameters it is given, encoded', () => {
    const printable = fc.string({ minLength: 1, maxLength: 12 }).filter((text) => controlCharacterIn(text) === null && text.isWellFormed());
    fc.assert(
      fc.property(fc.dictionary(printable, fc.string({ maxLength: 12 }).filter((text) => controlCharacterIn(text) === null && text.isWellFormed())), (params) => {
        const search = Object.entries(params).map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&');
        const parsed = parseQueryString(search);
        expect(parsed.problem).toBeNull();
        expect(parsed.values).toEqual(params);
      }),
    );
  });
});

describe('searchOf', () => {
  it('returns what follows the first ?, or nothing', () => {
    expect(searchOf('/v2/brands?limit=5&q=a?b')).toBe('limit=5&q=a?b');
    expect(searchOf('/v2/brands')).toBe('');
    expect(searchOf('/v2/brands?')).toBe('');
  });
});

describe('assertNoProblem', () => {
  it('throws InvalidRequest with the problem, and nothing when there is none', () => {
    expect(() => assertNoProblem(parseQueryString('a=1'))).not.toThrow();
    expect(() => assertNoProblem(parseQueryString('a=1&a=2'))).toThrow(InvalidRequest);
    expect(() => assertNoProblem(parseQueryString('a=1&a=2'))).toThrow('Query parameter "a" was given more than once; give it once.');
  });
});

describe('controlCharacterIn', () => {
  it('finds C0 controls, DEL and C1 controls, and nothing else', () => {
    expect(controlCharacterIn('plain text, ünïcode, 😀')).toBeNull();
    expect(controlCharacterIn('a\tb')).toBe('U+0009 at position 2');
    expect(controlCharacterIn('\u001f ')).toBe('U+001F at position 1');
    expect(controlCharacterIn('\u007f')).toBe('U+007F at position 1');
    expect(controlCharacterIn('ab\u0085')).toBe('U+0085 at position 3');
    expect(controlCharacterIn('ab\u009f')).toBe('U+009F at position 3');
    expect(controlCharacterIn('\u00a0')).toBeNull();
  });
});
