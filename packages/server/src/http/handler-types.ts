// What a handler is, for every operation of both listeners: it receives the validated request of
// its operation and the caller's context, and returns one of the contract's documented results
// (derived in @catalog/contract from the generated types) as `{ status, headers?, body }`. An API
// operation's 2xx body may also be JSON text the stores already hold (`Serialized`); a stream
// operation's 200 body is a StreamBody (an AsyncIterable of frames), which the one writer copies to the socket. A handler
// never touches the response, and one that returns an undocumented status or a wrong body does
// not compile.
import type { OperationId, OperationRequest, OperationResult, OperationTable, Plan } from '@catalog/contract';
import type { StreamBody } from '../stream/readiness.ts';
import type { Serialized } from './serialized.ts';

/** `TResult` with each 2xx body widened to the body or its serialised text. */
export type Sendable<TResult> = TResult extends { status: infer Status extends number; body: infer Body }
  ? `${Status}` extends `2${string}`
    ? { status: Status; body: Body | Serialized<Body> }
    : TResult
  : never;

/** `TResult` with its 200 body a stream of frames rather than one value. */
export type Streamed<TResult> = TResult extends { status: 200 } ? { status: 200; body: StreamBody } : TResult;

export type HandlerResult<Id extends OperationId> = (OperationTable[Id]['listener'] extends 'stream'
  ? Streamed<OperationResult<Id>>
  : Sendable<OperationResult<Id>>) & {
  /** Headers of this answer; the pipeline adds X-Request-Id, RateLimit and CORS headers. */
  headers?: Record<string, string>;
};

/** What every handler receives besides its validated request; `TServices` are its listener's. */
export type HandlerContext<TServices> = TServices & {
  requestId: string;
  /** The caller's key (as sent) and plan, once authenticated and authorised. */
  key: string;
  plan: Plan;
  /** A HEAD request: the answer's body is not sent, so a handler need not produce one. */
  head: boolean;
};

export type Handler<Id extends OperationId, TServices> = (
  request: OperationRequest<Id>,
  context: HandlerContext<TServices>,
) => Promise<HandlerResult<Id>> | HandlerResult<Id>;

/** One handler per operation of `Ids`; the type proves none is missing. */
export type Handlers<Ids extends OperationId, TServices> = { [Id in Ids]: Handler<Id, TServices> };
