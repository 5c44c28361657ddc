// The contract's success envelopes, defined once: v2 (`status`, `error`, `message`, `query`,
// `data`, `meta`) and v3 (`status`, `data`, `meta`). Each comes as a value (serialised by
// exchange.ts) and as a splice around JSON text the stores already hold (documents are written
// into the response as they are stored, with no parse and no re-serialisation).
import type { Serialized } from '../generated/handlers.gen.ts';
import { serialized } from './serialized.ts';

/** The v2 envelope around `data`. */
export function v2Body<TData>(data: TData, meta: null = null): { status: 'success'; error: ''; message: ''; query: Record<string, never>; data: TData; meta: null } {
  return { status: 'success', error: '', message: '', query: {}, data, meta };
}

/** The v2 envelope around `dataJson`, JSON text of `data`; `metaJson` likewise. */
export function v2Splice<TBody>(dataJson: string, metaJson = 'null'): Serialized<TBody> {
  return serialized<TBody>(`{"status":"success","error":"","message":"","query":{},"data":${dataJson},"meta":${metaJson}}`);
}

/** The v3 envelope around `dataJson`, JSON text of `data`; `metaJson` likewise. */
export function v3Splice<TBody>(dataJson: string, metaJson: string): Serialized<TBody> {
  return serialized<TBody>(`{"status":"success","data":${dataJson},"meta":${metaJson}}`);
}

/** JSON text of an array whose items are JSON texts. */
export function jsonArray(items: readonly string[]): string {
  return `[${items.join(',')}]`;
}

/** JSON text of the page meta. */
export function pageMeta(total: number, totalPages: number): string {
  return JSON.stringify({ total, total_pages: totalPages });
}
