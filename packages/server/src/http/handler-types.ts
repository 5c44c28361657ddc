// What a handler is, for every operation of both listeners: it receives the validated request of
// its operation (the contract's generated request type) and the caller's context, and returns a
// documented `{ status, headers?, body }`. The body is a value (serialised by the one writer), a
// Serialized splice of stored JSON, or, for a streamed operation's 200, a FrameStream the one
// writer copies to the socket. A handler never touches the response.
import type { OperationId, OperationTypes, Plan, operations } from '../generated/handlers.gen.ts';
import type { FrameStream } from './event-stream-writer.ts';

/** A 200 of a stream listener's operation is a stream of frames, not one JSON value. */
type Streamed<TResult> = TResult extends { status: 200 } ? { status: 200; body: FrameStream } : TResult;

export type HandlerResult<Id extends OperationId> = ((typeof operations)[Id]['listener'] extends 'stream'
  ? Streamed<OperationTypes[Id]['result']>
  : OperationTypes[Id]['result']) & {
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
  request: OperationTypes[Id]['request'],
  context: HandlerContext<TServices>,
) => Promise<HandlerResult<Id>> | HandlerResult<Id>;

/** One handler per operation of `Ids`; the type proves none is missing. */
export type Handlers<Ids extends OperationId, TServices> = { [Id in Ids]: Handler<Id, TServices> };
