// Reads an NDJSON file as lines that a hostile line cannot break: every line is either a parsed
// JSON value or a problem to report as FILE:LINE, and the next line is read whatever happened.
// Guarantees:
// - a line over IMPORT_LIMITS.lineBytes is skipped without being held in memory whole;
// - invalid UTF-8 is a problem, never silently replaced with U+FFFD;
// - a UTF-8 byte order mark is accepted at the start of line 1 (and only there);
// - nesting deeper than IMPORT_LIMITS.depth is found by a linear scan before JSON.parse runs, so a
//   10,000-deep value costs one pass and never a stack overflow, and nothing accepted is deeper than
//   every read path (SQLite's JSON functions stop at 1,000 levels) can follow;
// - numbers that overflow a double (`1e400`) are a problem: JSON.parse would make them Infinity,
//   which JSON.stringify then writes as null.
import { createReadStream } from 'node:fs';

/** The import limits the contract documents (OpenAPI `info.description`, "Importing data"). */
export const IMPORT_LIMITS = {
  /** Bytes of one NDJSON line (one product with all its variants). */
  lineBytes: 4 * 1024 * 1024,
  /** Levels of nested arrays and objects in one product, the product itself being level 1. */
  depth: 32,
} as const;

export type NdjsonLine = { line: number; value: unknown } | { line: number; problem: string };

const NEWLINE = 0x0a;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Yields each non-blank line of `file` with its 1-based number. */
export async function* readNdjson(file: string): AsyncGenerator<NdjsonLine> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let parts: Buffer[] = [];
  let length = 0;
  let oversized = false;
  let line = 0;

  const finish = (): NdjsonLine | undefined => {
    line += 1;
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
    const wasOversized = oversized;
    parts = [];
    length = 0;
    oversized = false;
    if (wasOversized) return { line, problem: `the line is longer than the ${IMPORT_LIMITS.lineBytes}-byte limit` };
    return parseLine(line, line === 1 && bytes.subarray(0, 3).equals(BOM) ? bytes.subarray(3) : bytes, decoder);
  };

  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(NEWLINE, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      if (!oversized) {
        if (length + piece.length > IMPORT_LIMITS.lineBytes) {
          oversized = true;
          parts = [];
        } else if (piece.length > 0) {
          parts.push(piece);
        }
        length += piece.length;
      }
      if (end === -1) break;
      const result = finish();
      if (result !== undefined) yield result;
      start = end + 1;
    }
  }
  if (length > 0 || oversized) {
    const result = finish();
    if (result !== undefined) yield result;
  }
}

function parseLine(line: number, bytes: Buffer, decoder: TextDecoder): NdjsonLine | undefined {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { line, problem: `invalid UTF-8 at byte ${firstInvalidUtf8(bytes) + 1} of the line` };
  }
  if (text.endsWith('\r')) text = text.slice(0, -1);
  if (text.trim() === '') return undefined;
  const depth = nestingDepth(text);
  if (depth > IMPORT_LIMITS.depth) return { line, problem: `the value nests deeper than ${IMPORT_LIMITS.depth} levels` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { line, problem: `invalid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  const infinite = findNonFinite(value, '');
  if (infinite !== undefined) return { line, problem: `${infinite === '' ? 'the product' : infinite} is a number too large for a double` };
  return { line, value };
}

/** The deepest nesting of arrays and objects outside strings; linear, no recursion. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i += 1;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x7b || code === 0x5b) {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (code === 0x7d || code === 0x5d) {
      depth -= 1;
    }
  }
  return deepest;
}

/** The JSON pointer of the first number JSON.parse turned into ±Infinity; depth is bounded already. */
function findNonFinite(value: unknown, at: string): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : at;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = findNonFinite(value[i], `${at}/${i}`);
      if (found !== undefined) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const found = findNonFinite(inner, `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** 0-based offset of the first byte that does not begin or continue a valid UTF-8 sequence. */
function firstInvalidUtf8(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    const size = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (size === 0) return i;
    if (size > 1) {
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(i, i + size));
      } catch {
        return i;
      }
    }
    i += size;
  }
  return i;
}
