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

interface Token {
  kind: TokenKind;
  /** Unescaped content for strings, the raw text otherwise. */
  text: string;
  /** 1-based index of the token's first character. */
  position: number;
}

const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'IN']);
const PUNCTUATION = new Set(['(', ')', '[', ']', ',']);
/** Characters that end a bare word. */
const WORD_BREAK = /[\s()[\],=!<>"']/u;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text.charAt(i);
    const position = i + 1;
    if (/\s/u.test(char)) {
      i += 1;
    } else if (PUNCTUATION.has(char)) {
      tokens.push({ kind: char as TokenKind, text: char, position });
      i += 1;
    } else if (char === '=') {
      tokens.push({ kind: 'operator', text: '=', position });
      i += 1;
    } else if (char === '!' || char === '<' || char === '>') {
      if (text.charAt(i + 1) === '=') {
        tokens.push({ kind: 'operator', text: `${char}=`, position });
        i += 2;
      } else if (char === '!') {
        throw new InvalidFilter(position, 'unexpected "!"; use "!=" or NOT');
      } else {
        tokens.push({ kind: 'operator', text: char, position });
        i += 1;
      }
    } else if (char === '"' || char === "'") {
      let value = '';
      let j = i + 1;
      for (;;) {
        if (j >= text.length) throw new InvalidFilter(position, 'unterminated string');
        const c = text.charAt(j);
        if (c === '\\') {
          if (j + 1 >= text.length) throw new InvalidFilter(position, 'unterminated string');
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
      tokens.push({ kind: 'string', text: value, position });
      i = j;
    } else {
      let j = i;
      while (j < text.length && !WORD_BREAK.test(text.charAt(j))) j += 1;
      tokens.push({ kind: 'word', text: text.slice(i, j), position });
      i = j;
    }
  }
  tokens.push({ kind: 'end', text: '', position: text.length + 1 });
  return tokens;
}

function isKeyword(token: Token, keyword?: string): boolean {
  if (token.kind !== 'word') return false;
  const upper = token.text.toUpperCase();
  return keyword === undefined ? KEYWORDS.has(upper) : upper === keyword;
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
