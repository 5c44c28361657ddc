// Each operation's validated request and documented results, derived from hey-api's types
// (`GetProductData`, `GetProductResponses`, `GetProductErrors`, … in generated/types.gen.ts) and the
// operation table. A request has every parameter the validator guarantees: required ones, and
// optional query parameters with a default (hey-api marks them optional; validation fills them).
import type { OperationSignatures, operations } from './generated/operations.gen.ts';

export type OperationTable = typeof operations;
export type OperationId = keyof OperationTable;
export type Plan = OperationTable[OperationId]['plans'][number];

/** Operations served by the API listener, each by one handler; the rest are the stream's. */
export type ApiOperationId = { [Id in OperationId]: OperationTable[Id]['listener'] extends 'api' ? Id : never }[OperationId];

/** One part of a hey-api `*Data` type (`query`, `path`, `headers`); an absent part has no fields. */
type Part<TData, TKey extends string> = TKey extends keyof TData
  ? [NonNullable<TData[TKey]>] extends [never]
    ? Record<string, never>
    : NonNullable<TData[TKey]>
  : Record<string, never>;

/** `TFields` with the `TPresent` keys required: their values are always there after validation. */
export type WithDefaults<TFields, TPresent extends PropertyKey> = Flat<
  Omit<TFields, TPresent> & { [Key in TPresent & keyof TFields]-?: Exclude<TFields[Key], undefined> }
>;
type Flat<T> = { [Key in keyof T]: T[Key] };

/** The validated request of an operation. */
export interface OperationRequest<Id extends OperationId> {
  query: WithDefaults<Part<OperationSignatures[Id]['data'], 'query'>, OperationTable[Id]['queryDefaults'][number]>;
  params: Part<OperationSignatures[Id]['data'], 'path'>;
  headers: Part<OperationSignatures[Id]['data'], 'headers'>;
}

/** `{ status, body }` for each status of a hey-api `*Responses` or `*Errors` map. */
type StatusBodies<TByStatus> = { [Status in keyof TByStatus & number]: { status: Status; body: TByStatus[Status] } }[keyof TByStatus & number];

/** Every response an operation may give, by the spec: one `{ status, body }` per documented status. */
export type OperationResult<Id extends OperationId> = StatusBodies<OperationSignatures[Id]['responses'] & OperationSignatures[Id]['errors']>;

export type OperationTypes = { [Id in OperationId]: { request: OperationRequest<Id>; result: OperationResult<Id> } };
