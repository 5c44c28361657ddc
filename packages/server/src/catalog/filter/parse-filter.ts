// Parses the filter language (Meilisearch style) into a type-checked FilterExpr, for one use (a
// FilterLanguage: the storefront's `filters`, the stream's `Filter` header): one grammar, a field
// table and limits per use.
// Guarantees: the result only names fields of the use's table, every literal already has its field's
// type (timestamps as epoch milliseconds, cursors as exact doubles), and every refusal is an
// InvalidFilter carrying the 1-based position of the offending character and a plain problem.
import { InvalidFilter } from '../errors.ts';
import {
  MAX_FILTER_DEPTH,
  STOREFRONT_FILTER,
  type CompareOperator,
  type FieldType,
  type FilterExpr,
  type FilterField,
  type FilterLanguage,
  type FilterLiteral,
} from './ast.ts';

type TokenKind = 'word' | 'string' | 'operator' | '(' | ')' | '[' | ']' | ',' | 'end';

export interface Token {
  kind: TokenKind;
  /** Unescaped content for strings, the raw text otherwise. */
  text: string;
  /** 1-based index of the token's first character. */
  position: number;
  /** For a word that is a keyword (in any case): AND, OR, NOT or IN; else null. */
  keyword: string | null;
}

const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'IN']);

/** What each ASCII character is to the tokenizer, by code: part of a word, or one of these. */
const SPACE = 1;
/** Ends a bare word besides whitespace: ( ) [ ] , = ! < > " ' */
const BREAK = 2;
const ASCII = new Uint8Array(128);
for (const space of '\t\n\v\f\r ') ASCII[space.charCodeAt(0)] = SPACE;
for (const breaker of '()[],=!<>"\'') ASCII[breaker.charCodeAt(0)] = BREAK;
/** Whitespace as the language reads it: JavaScript's `\s`, which beyond ASCII is Unicode's. */
const UNICODE_SPACE = /\s/u;

const isSpace = (code: number, char: string): boolean => (code < 128 ? ASCII[code] === SPACE : UNICODE_SPACE.test(char));

/**
 * The tokens of `text`, in one pass: each character is looked at once (strings are copied a run
 * between escapes at a time), so the time is linear in the filter's length.
 */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const length = text.length;
  let i = 0;
  while (i < length) {
    const code = text.charCodeAt(i);
    const position = i + 1;
    if (isSpace(code, text[i]!)) {
      i += 1;
      continue;
    }
    switch (code) {
      case 0x28: // (
      case 0x29: // )
      case 0x5b: // [
      case 0x5d: // ]
      case 0x2c: {
        // ,
        const char = text[i]!;
        tokens.push({ kind: char as TokenKind, text: char, position, keyword: null });
        i += 1;
        continue;
      }
      case 0x3d: // =
        tokens.push({ kind: 'operator', text: '=', position, keyword: null });
        i += 1;
        continue;
      case 0x21: // !
      case 0x3c: // <
      case 0x3e: {
        // >
        const char = text[i]!;
        if (text.charCodeAt(i + 1) === 0x3d) {
          tokens.push({ kind: 'operator', text: `${char}=`, position, keyword: null });
          i += 2;
        } else if (code === 0x21) {
          throw new InvalidFilter(position, 'unexpected "!"; use "!=" or NOT');
        } else {
          tokens.push({ kind: 'operator', text: char, position, keyword: null });
          i += 1;
        }
        continue;
      }
      case 0x22: // "
      case 0x27: {
        // '
        let value = '';
        let from = i + 1;
        for (;;) {
          let at = from;
          while (at < length && text.charCodeAt(at) !== code && text.charCodeAt(at) !== 0x5c) at += 1;
          if (at >= length) throw new InvalidFilter(position, 'unterminated string');
          value += text.slice(from, at);
          if (text.charCodeAt(at) === code) {
            i = at + 1;
            break;
          }
          // A backslash keeps the next character as it is.
          if (at + 1 >= length) throw new InvalidFilter(position, 'unterminated string');
          value += text[at + 1]!;
          from = at + 2;
        }
        tokens.push({ kind: 'string', text: value, position, keyword: null });
        continue;
      }
    }
    let j = i + 1;
    for (; j < length; j += 1) {
      const next = text.charCodeAt(j);
      if (next < 128 ? ASCII[next] !== 0 : UNICODE_SPACE.test(text[j]!)) break;
    }
    const word = text.slice(i, j);
    // Upper-casing never shortens a word, so only words of up to three characters can be keywords.
    const upper = word.length <= 3 ? word.toUpperCase() : '';
    tokens.push({ kind: 'word', text: word, position, keyword: KEYWORDS.has(upper) ? upper : null });
    i = j;
  }
  tokens.push({ kind: 'end', text: '', position: length + 1, keyword: null });
  return tokens;
}

function isKeyword(token: Token, keyword?: string): boolean {
  return keyword === undefined ? token.keyword !== null : token.keyword === keyword;
}

function describe(token: Token): string {
  switch (token.kind) {
    case 'end':
      return 'the end of the filter';
    case 'string':
      return `the string "${token.text}"`;
    case 'word':
    case 'operator':
    case '(':
    case ')':
    case '[':
    case ']':
    case ',':
      return `"${token.text}"`;
  }
}


const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

function abbreviate(text: string): string {
  return text.length > 24 ? `${text.slice(0, 20)}… (${text.length} digits)` : text;
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/u;
const INTEGER = /^[+-]?\d+$/u;
const ISO_8601 =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/iu;

/** Epoch milliseconds of an ISO 8601 date or date-time; a missing zone means UTC. */
function parseTimestamp(text: string): number | undefined {
  if (!ISO_8601.test(text)) return undefined;
  let normalized = text.replace(' ', 'T').toUpperCase();
  if (normalized.includes('T') && !/(?:Z|[+-]\d{2}:?\d{2})$/u.test(normalized)) normalized += 'Z';
  // Date.parse accepts at most millisecond precision; extra fraction digits are truncated.
  normalized = normalized.replace(/(\.\d{3})\d+/u, '$1').replace(/([+-]\d{2})(\d{2})$/u, '$1:$2');
  const [, month, day] = /^\d{4}-(\d{2})-(\d{2})/u.exec(normalized) ?? [];
  const ms = Date.parse(normalized);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2026-02-31 over to March: the calendar date as written must exist.
  const calendar = new Date(Date.UTC(Number(normalized.slice(0, 4)), Number(month) - 1, Number(day)));
  if (calendar.getUTCMonth() + 1 !== Number(month) || calendar.getUTCDate() !== Number(day)) return undefined;
  return ms;
}

class Parser {
  private readonly tokens: Token[];
  private readonly language: FilterLanguage<string>;
  private index = 0;
  private values = 0;

  constructor(tokens: Token[], language: FilterLanguage<string>) {
    this.tokens = tokens;
    this.language = language;
  }

  /** Counts one literal value against the use's limit. */
  private countValue(token: Token): void {
    this.values += 1;
    if (this.values > this.language.maxValues) {
      throw new InvalidFilter(token.position, `more than ${this.language.maxValues} values in all`);
    }
  }

  private peek(): Token {
    // The token list always ends with an 'end' token and parsing never advances past it.
    return this.tokens[this.index] ?? this.tokens[this.tokens.length - 1]!;
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== 'end') this.index += 1;
    return token;
  }

  parse(): FilterExpr<string> {
    if (this.peek().kind === 'end') throw new InvalidFilter(1, 'expected a filter expression, got nothing');
    const expr = this.parseOr(0);
    const rest = this.peek();
    if (rest.kind !== 'end') {
      const problem =
        rest.kind === ')' ? 'unmatched ")"' : `expected AND, OR or the end of the filter, got ${describe(rest)}`;
      throw new InvalidFilter(rest.position, problem);
    }
    return expr;
  }

  private parseOr(depth: number): FilterExpr<string> {
    const operands = [this.parseAnd(depth)];
    while (isKeyword(this.peek(), 'OR')) {
      this.next();
      operands.push(this.parseAnd(depth));
    }
    return operands.length === 1 ? operands[0]! : { type: 'or', operands };
  }

  private parseAnd(depth: number): FilterExpr<string> {
    const operands = [this.parseUnary(depth)];
    while (isKeyword(this.peek(), 'AND')) {
      this.next();
      operands.push(this.parseUnary(depth));
    }
    return operands.length === 1 ? operands[0]! : { type: 'and', operands };
  }

  private parseUnary(depth: number): FilterExpr<string> {
    const token = this.peek();
    if (isKeyword(token, 'NOT')) {
      this.enter(token, depth + 1);
      this.next();
      return { type: 'not', operand: this.parseUnary(depth + 1) };
    }
    if (token.kind === '(') {
      this.enter(token, depth + 1);
      this.next();
      if (this.peek().kind === ')') throw new InvalidFilter(this.peek().position, 'empty parentheses');
      const inner = this.parseOr(depth + 1);
      const close = this.peek();
      if (close.kind !== ')') {
        throw new InvalidFilter(close.position, `expected ")" to close the "(" at position ${token.position}, got ${describe(close)}`);
      }
      this.next();
      return inner;
    }
    return this.parseCondition();
  }

  private enter(token: Token, depth: number): void {
    if (depth > MAX_FILTER_DEPTH) {
      throw new InvalidFilter(token.position, `expression nested deeper than ${MAX_FILTER_DEPTH} levels`);
    }
  }

  private parseCondition(): FilterExpr<string> {
    const fieldToken = this.next();
    if (fieldToken.kind !== 'word' || isKeyword(fieldToken)) {
      throw new InvalidFilter(fieldToken.position, `expected a field name, got ${describe(fieldToken)}`);
    }
    const name = fieldToken.text;
    const { fields } = this.language;
    if (!Object.hasOwn(fields, name)) {
      throw new InvalidFilter(fieldToken.position, `unknown field "${name}"; filterable fields are ${Object.keys(fields).join(', ')}`);
    }
    const type: FieldType = fields[name] as FieldType;
    const operatorToken = this.next();
    if (operatorToken.kind === 'operator') {
      const operator = operatorToken.text as CompareOperator;
      if (operator !== '=' && operator !== '!=' && (type === 'string' || type === 'tag' || type === 'boolean')) {
        throw new InvalidFilter(
          operatorToken.position,
          `"${operator}" cannot compare "${name}", a ${type === 'boolean' ? 'boolean' : 'string'} field; use =, != or IN`,
        );
      }
      const valueToken = this.next();
      if (!isValueToken(valueToken)) {
        // At the end of the text, point at the operator that lacks its value (as the contract's example does).
        if (valueToken.kind === 'end') throw new InvalidFilter(operatorToken.position, `expected a value after "${operator}"`);
        throw new InvalidFilter(valueToken.position, `expected a value after "${operator}", got ${describe(valueToken)}`);
      }
      this.countValue(valueToken);
      return { type: 'compare', field: name, operator, value: convert(name, type, valueToken) };
    }
    let negated = false;
    let inToken = operatorToken;
    if (isKeyword(operatorToken, 'NOT')) {
      negated = true;
      inToken = this.next();
    }
    if (!isKeyword(inToken, 'IN')) {
      const expected = negated ? 'IN after NOT' : 'an operator (=, !=, >, >=, <, <=, IN or NOT IN)';
      throw new InvalidFilter(inToken.position, `expected ${expected} after "${name}", got ${describe(inToken)}`);
    }
    const open = this.next();
    if (open.kind !== '[') throw new InvalidFilter(open.position, `expected "[" after IN, got ${describe(open)}`);
    const values: FilterLiteral[] = [];
    for (;;) {
      const valueToken = this.next();
      if (!isValueToken(valueToken)) {
        const problem =
          valueToken.kind === ']' && values.length === 0
            ? 'the list after IN is empty'
            : `expected a value in the list, got ${describe(valueToken)}`;
        throw new InvalidFilter(valueToken.position, problem);
      }
      this.countValue(valueToken);
      values.push(convert(name, type, valueToken));
      const separator = this.next();
      if (separator.kind === ']') break;
      if (separator.kind !== ',') {
        throw new InvalidFilter(separator.position, `expected "," or "]" in the list, got ${describe(separator)}`);
      }
    }
    return { type: 'in', field: name, values, negated };
  }
}

function isValueToken(token: Token): boolean {
  return token.kind === 'string' || (token.kind === 'word' && !isKeyword(token));
}

function convert(field: string, type: FieldType, token: Token): FilterLiteral {
  const text = token.text;
  switch (type) {
    case 'string':
    case 'tag':
      return text;
    case 'number': {
      const value = Number(text);
      if (!NUMBER.test(text) || !Number.isFinite(value)) {
        throw new InvalidFilter(token.position, `"${field}" needs a number, got "${abbreviate(text)}"`);
      }
      return value;
    }
    case 'integer': {
      if (!INTEGER.test(text)) throw new InvalidFilter(token.position, `"${field}" needs an integer, got "${text}"`);
      const exact = BigInt(text);
      // Integer fields are stored as signed 64-bit integers by both engines.
      if (exact > INT64_MAX || exact < INT64_MIN) {
        throw new InvalidFilter(token.position, `"${field}" value ${abbreviate(text)} is out of range; cursors are below 2^63`);
      }
      const value = Number(text);
      // Cursors are exact doubles; a larger integer that a double cannot hold would silently
      // compare against a neighbouring value.
      if (BigInt(value) !== exact) {
        throw new InvalidFilter(
          token.position,
          `"${field}" value ${text} cannot be represented exactly; use a cursor value returned by the API`,
        );
      }
      return value;
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      if (lower !== 'true' && lower !== 'false') {
        throw new InvalidFilter(token.position, `"${field}" needs true or false, got "${text}"`);
      }
      return lower === 'true';
    }
    case 'timestamp': {
      const ms = parseTimestamp(text);
      if (ms === undefined) {
        throw new InvalidFilter(token.position, `"${field}" needs an ISO 8601 date or date-time, got "${text}"`);
      }
      return ms;
    }
  }
}

/** Parses `text` for one use of the language (the storefront's `filters` unless told). */
export function parseFilter(text: string): FilterExpr<FilterField>;
export function parseFilter<F extends string>(text: string, language: FilterLanguage<F>): FilterExpr<F>;
export function parseFilter(text: string, language: FilterLanguage<string> = STOREFRONT_FILTER): FilterExpr<string> {
  const length = language.unit === 'bytes' ? Buffer.byteLength(text, 'utf8') : text.length;
  if (length > language.maxLength) {
    throw new InvalidFilter(
      Math.min(text.length, language.maxLength + 1),
      `filter is ${length} ${language.unit} long; the limit is ${language.maxLength}`,
    );
  }
  return new Parser(tokenize(text), language).parse();
}
