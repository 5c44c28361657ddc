// What a handler may return: the contract's documented `{ status, body }` results (derived in
// @catalog/contract from the generated types), where a success body may also be JSON text the
// stores already hold (`Serialized`). A handler that returns an undocumented status or a wrong
// body does not compile.
import type { ApiOperationId, OperationRequest, OperationResult } from '@catalog/contract';
import type { Serialized } from './serialized.ts';

/** `TResult` with each 2xx body widened to the body or its serialised text. */
export type Sendable<TResult> = TResult extends { status: infer Status extends number; body: infer Body }
  ? `${Status}` extends `2${string}`
    ? { status: Status; body: Body | Serialized<Body> }
    : TResult
  : never;

/**
 * One handler per API operation. A handler receives the validated request and the caller's
 * context (`TContext`, supplied by the transport) and returns a documented `{ status, body }`.
 */
export type Handlers<TContext> = {
  [Id in ApiOperationId]: (
    request: OperationRequest<Id>,
    context: TContext,
  ) => Promise<Sendable<OperationResult<Id>>> | Sendable<OperationResult<Id>>;
};
