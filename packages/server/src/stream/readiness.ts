// The readiness protocol, in one place: a stream body is an AsyncIterable of encoded frames to
// everyone who handles it (the handler, the pipeline, tests); a body that can say more carries a
// Readiness under the READINESS symbol, and only the one writer (http/event-stream-writer.ts)
// asks for it, through readinessOf(). A plain AsyncIterable is a valid body: it is pulled right
// after each write, counts no upstream bytes and has no end signal.
//
// What a Readiness promises the writer:
// - `pendingBytes`: bytes queued upstream and not yet pulled; they count toward the subscriber's
//   buffer limit with what the response and the kernel hold;
// - `signal`: aborted when the body ends upstream (however it ends), so that a wait for a write
//   to reach the kernel does not outlast the body;
// - `whenReadable(listener)`: true when a next() would settle at once; otherwise false, and
//   `listener` is called once, when it would (events arrived, or the end). The writer then pulls
//   only when there is something to take: an idle subscriber holds no pending next();
// - `take()`: what a next() would settle with at once, handed over without a promise, or null
//   when next() would wait or read (the opening, a replay page, nothing queued). The writer pulls
//   with it first and with next() when it gives null, so live batches cost no promise, result
//   and reaction job each, and a woken subscriber's batch is written in the same pass that took it.
//
// A source of batches (stream/subscription.ts) also offers map(): it settles each next() with
// `mapping.batch(items)` directly, so that a body turning batches into bytes
// (stream/encoded-subscription.ts) costs one promise per batch, not two. Why the protocol is
// shaped by allocation (no pending promise per idle subscriber, one object per stream, results
// as class instances) is told, with the measurements, in bench/README.md ("The stream's memory").

export const READINESS: unique symbol = Symbol('stream body readiness');

export interface Readiness {
  /** Bytes queued upstream and not yet pulled. */
  readonly pendingBytes: number;
  /** Aborted when the body ends upstream, however it ends. */
  readonly signal: AbortSignal;
  /** True when a next() would settle at once; otherwise false, and `listener` is called once when it would. */
  whenReadable(listener: () => void): boolean;
  /**
   * The result a next() would settle with at once, taken now (as next() would take it), or null
   * when next() has to wait or read; throws what that next() would reject with.
   */
  take(): IteratorResult<unknown> | null;
}

/** A streamed response body: encoded frames, optionally with its Readiness. */
export interface StreamBody extends AsyncIterable<string | Buffer> {
  readonly [READINESS]?: Readiness;
}

/** The body's Readiness, or undefined for a plain AsyncIterable. */
export function readinessOf(body: AsyncIterable<unknown>): Readiness | undefined {
  return (body as { [READINESS]?: Readiness })[READINESS];
}

export function isStreamBody(body: unknown): body is StreamBody {
  return typeof body === 'object' && body !== null && Symbol.asyncIterator in body;
}

/** Ends a body that will not be written (or no further): its iterator's return() releases it, iterated or not. */
export async function closeBody(body: StreamBody): Promise<void> {
  await body[Symbol.asyncIterator]().return?.();
}

/** What a consumer of map() makes of each batch, and of the error the source ended with. */
export interface BatchMapping<I, T> {
  batch(items: readonly I[]): T;
  /** The last result for that error; without it (or when it throws) next() rejects. */
  failed?(error: Error): IteratorResult<T>;
  /** Called as next() yields the end (cleanly, or after `failed`'s result). */
  done?(): void;
}

/** A source of batches of `I` with its readiness, iterated once, as is or through a mapping. */
export interface BatchSource<I> extends AsyncIterable<readonly I[]> {
  readonly [READINESS]: Readiness;
  map<T>(mapping: BatchMapping<I, T>): AsyncIterator<T>;
}

/** next()'s result for a batch: a class rather than an object literal (see bench/README.md, "The stream's memory"). */
export class Batch<T> implements IteratorYieldResult<T> {
  readonly done = false;
  readonly value: T;
  constructor(value: T) {
    this.value = value;
  }
}
