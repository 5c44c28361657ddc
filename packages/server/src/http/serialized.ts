// Success bodies that are already JSON text. A Serialized body skips JSON.stringify in
// exchange.ts; the producer guarantees the text is the JSON of a valid body of that type (the
// contract tests validate what the server actually sends, so a wrong splice cannot go unnoticed).
import type { Serialized } from '../generated/handlers.gen.ts';

export function serialized<TBody>(json: string): Serialized<TBody> {
  return { serializedJson: json };
}

export function isSerialized(body: unknown): body is Serialized<unknown> {
  return typeof body === 'object' && body !== null && typeof (body as { serializedJson?: unknown }).serializedJson === 'string';
}
