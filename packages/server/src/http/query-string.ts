// Query strings are parsed here rather than by Express so that a repeated parameter and broken
// percent-encoding are refused with a message instead of silently becoming arrays or U+FFFD.
import { InvalidRequest } from '../catalog/errors.ts';

export interface ParsedQuery {
  /** Each parameter once, decoded. */
  values: Record<string, string>;
  /** The first problem found, as a client-facing message, or null. */
  problem: string | null;
}

/**
 * The parsed parameters' object: nothing is inherited (`__proto__`, `constructor` or `toString`
 * are parameter names like any other, refused later as unknown), yet the object is an ordinary
 * one to V8. An object made by Object.create(null) is kept as a dictionary, and each later copy or
 * walk of it (validation copies the query; refusals echo it) takes V8's slow path.
 */
function QueryValues(): void {}
QueryValues.prototype = Object.freeze(Object.create(null) as object);

export function parseQueryString(search: string): ParsedQuery {
  const values = new (QueryValues as unknown as new () => Record<string, string>)();
  let problem: string | null = null;
  if (search === '') return { values, problem };
  for (const part of search.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawName = eq === -1 ? part : part.slice(0, eq);
    const rawValue = eq === -1 ? '' : part.slice(eq + 1);
    const name = decode(rawName);
    const value = decode(rawValue);
    if (name === null || value === null) {
      problem ??= `The query string has malformed percent-encoding near "${truncate(part)}".`;
      continue;
    }
    const control = controlCharacterIn(value) ?? controlCharacterIn(name);
    if (control !== null) {
      problem ??= `Query parameter "${truncate(printable(name))}" contains the control character ${control}; remove it.`;
      continue;
    }
    if (Object.hasOwn(values, name)) {
      problem ??= `Query parameter "${truncate(name)}" was given more than once; give it once.`;
      continue;
    }
    values[name] = value;
  }
  return { values, problem };
}

/** The query string of a request URL, without the `?`. */
export function searchOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? '' : url.slice(q + 1);
}

export function assertNoProblem(parsed: ParsedQuery): void {
  if (parsed.problem !== null) throw new InvalidRequest(parsed.problem);
}

/**
 * `U+XXXX at position N` for the first C0 or C1 control character or DEL in a decoded value, or
 * null. No parameter of the contract has a use for them, and some stores give them a meaning (a
 * NUL ends a C string in a driver), so they are refused before anything reads the value.
 */
export function controlCharacterIn(text: string): string | null {
  for (let at = 0; at < text.length; at += 1) {
    const code = text.charCodeAt(at);
    if (isControl(code)) return `U+${code.toString(16).toUpperCase().padStart(4, '0')} at position ${at + 1}`;
  }
  return null;
}

function isControl(code: number): boolean {
  return code <= 0x1f || (code >= 0x7f && code <= 0x9f);
}

function printable(text: string): string {
  return Array.from(text, (char) => (isControl(char.charCodeAt(0)) ? '?' : char)).join('');
}

function decode(raw: string): string | null {
  if (raw.indexOf('%') === -1 && raw.indexOf('+') === -1) return raw;
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return null;
  }
}

/** Text from the request quoted in a refusal: at most 60 characters of it, and an ellipsis when cut. */
export function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
