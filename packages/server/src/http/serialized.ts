// Success bodies that are already JSON text. A Serialized body skips JSON.stringify in
// exchange.ts. It is made from RawJson of the whole body (catalog/raw-json.ts), whole or in
// pieces: in practice by envelope.ts, around the stores' documents (the contract tests validate
// what the server actually sends, so a wrong splice cannot go unnoticed either).
import type { RawJson } from '../catalog/raw-json.ts';

/**
 * A success body already serialised as JSON text by a trusted producer (a stored document spliced
 * into its envelope), sent as it is. Only `serialized()` makes one.
 */
export interface Serialized<TBody> {
  /** The body's JSON text, in pieces written one after the other (strings, or UTF-8 bytes). */
  readonly serializedJson: readonly (string | Uint8Array)[];
  /** Never set: carries the body type the text encodes. */
  readonly bodyType?: TBody;
}

declare const piecesOf: unique symbol;

/** The JSON text of a TBody in pieces: what a splice makes (envelope.ts), and nothing else. */
export type RawJsonPieces<TBody> = readonly (string | Uint8Array)[] & { readonly [piecesOf]: TBody };

export function serialized<TBody>(json: RawJson<TBody> | RawJsonPieces<TBody>): Serialized<TBody> {
  return { serializedJson: typeof json === 'string' ? [json] : json };
}

export function isSerialized(body: unknown): body is Serialized<unknown> {
  return typeof body === 'object' && body !== null && Array.isArray((body as { serializedJson?: unknown }).serializedJson);
}
