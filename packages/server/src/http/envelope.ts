// The contract's success envelopes, defined once: v2 (`status`, `error`, `message`, `query`,
// `data`, `meta`) and v3 (`status`, `data`, `meta`). Each comes as a value (serialised by
// exchange.ts) and as a splice around JSON text the stores already hold (documents are written
// into the response as they are stored, with no parse and no re-serialisation). A splice takes
// only RawJson of the body's own `data` and `meta` types, so the compiler checks what goes where.
// A splice is never concatenated into one string: its pieces go to the socket as they are (a
// concatenation would be copied again, as a whole, to be measured and written).
import { jsonOf, type RawJson, type RawJsonBytes } from '../catalog/raw-json.ts';
import { serialized, type RawJsonPieces, type Serialized } from './serialized.ts';

/** The v2 envelope around `data`. */
export function v2Body<TData>(data: TData, meta: null = null): { status: 'success'; error: ''; message: ''; query: Record<string, never>; data: TData; meta: null } {
  return { status: 'success', error: '', message: '', query: {}, data, meta };
}

/** The v2 envelope around `data`'s JSON text; `meta` likewise (null when absent). */
export function v2Splice<TBody extends { data: unknown; meta?: unknown }>(data: RawJson<TBody['data']>, meta?: RawJson<TBody['meta']>): Serialized<TBody> {
  return serialized(enveloped<TBody>('{"status":"success","error":"","message":"","query":{},"data":', data, `,"meta":${meta ?? 'null'}}`));
}

/** The v3 envelope around `data`'s JSON text; `meta` likewise. */
export function v3Splice<TBody extends { data: unknown; meta: unknown }>(data: RawJson<TBody['data']> | RawJsonBytes<TBody['data']>, meta: RawJson<TBody['meta']>): Serialized<TBody> {
  return serialized(enveloped<TBody>('{"status":"success","data":', data, `,"meta":${meta}}`));
}

/** The one place text becomes a body's JSON: an envelope written around RawJson of its own parts. */
function enveloped<TBody>(head: string, data: string | Uint8Array, tail: string): RawJsonPieces<TBody> {
  return [head, data, tail] as unknown as RawJsonPieces<TBody>;
}

/** JSON text of an array whose items are JSON texts. */
export function jsonArray<T>(items: readonly RawJson<T>[]): RawJson<T[]> {
  return `[${items.join(',')}]` as RawJson<T[]>;
}

/** JSON text of the page meta. */
export function pageMeta(total: number, totalPages: number): RawJson<{ total: number; total_pages: number }> {
  return jsonOf({ total, total_pages: totalPages });
}
