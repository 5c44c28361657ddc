// A subscription as the body of a server-sent-events response: the `opening` frame (the `retry:`
// field), then each batch it yields, encoded by the batch encoder into the bytes of its frames.
// To its consumers it is a StreamBody, an AsyncIterable; its Readiness (stream/readiness.ts) is
// the subscription's, except that the opening frame and the end are readable at once. No writing
// here (see http/event-stream-writer.ts). Once the body is finished, by its end or by its
// iterator's return() (iterated or not), the subscription is ended and `onClose` runs, once.
//
// Failure modes: when the price log fails under the stream (ServiceUnavailable), the body ends
// with a `retry:` frame asking clients to come back after `unavailableRetryMs`, and so the
// response ends cleanly and EventSource clients reconnect and resume with Last-Event-ID. Any
// other error (SubscriberOverflow) is thrown to the writer.
import { ServiceUnavailable } from '../catalog/errors.ts';
import type { Logger } from '../logger.ts';
import { streamMetrics } from '../metrics.ts';
import type { BatchEncoder } from './batch-encoder.ts';
import { encodeRetry } from '@catalog/contract/stream';
import { READINESS, type BatchMapping, type Readiness, type StreamBody } from './readiness.ts';
import type { StreamItem, Subscription } from './subscription.ts';

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

export interface EncodeSubscriptionOptions {
  /** The first frame of the body. */
  opening: string;
  unavailableRetryMs: number;
  log: Logger;
  /** Named in the body's warnings (`request_id`). */
  requestId?: string;
  onClose?: () => void;
}

export function encodeSubscription(subscription: Subscription, encoder: BatchEncoder, options: EncodeSubscriptionOptions): StreamBody {
  return new SubscriptionBody(subscription, encoder, options);
}

/**
 * The body is its own iterator, its own Readiness and the subscription's batch mapping: one
 * object per open stream, idle or not (bench/README.md, "The stream's memory").
 */
class SubscriptionBody implements StreamBody, Readiness, AsyncIterator<Buffer | string>, BatchMapping<StreamItem, Buffer | string> {
  readonly #subscription: Subscription;
  readonly #encoder: BatchEncoder;
  readonly #opening: string;
  readonly #unavailableRetryMs: number;
  readonly #log: Logger;
  readonly #requestId: string | undefined;
  readonly #onClose: (() => void) | undefined;
  /** The subscription's batches, encoded as each next() settles; made on first iteration. */
  #batches: AsyncIterator<Buffer | string> | null = null;
  #closed = false;
  #opened = false;
  #finished = false;

  constructor(subscription: Subscription, encoder: BatchEncoder, options: EncodeSubscriptionOptions) {
    this.#subscription = subscription;
    this.#encoder = encoder;
    this.#opening = options.opening;
    this.#unavailableRetryMs = options.unavailableRetryMs;
    this.#log = options.log;
    this.#requestId = options.requestId;
    this.#onClose = options.onClose;
  }

  get [READINESS](): Readiness {
    return this;
  }

  get pendingBytes(): number {
    return this.#subscription.pendingBytes;
  }

  get signal(): AbortSignal {
    return this.#subscription.signal;
  }

  whenReadable(listener: () => void): boolean {
    return !this.#opened || this.#finished || this.#subscription.whenReadable(listener);
  }

  /** Readiness: the subscription's live batch (or end) at once; the opening and the end after a retry hint go through next(). */
  take(): IteratorResult<Buffer | string> | null {
    if (!this.#opened || this.#finished) return null;
    return this.#subscription.take() as IteratorResult<Buffer | string> | null;
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer | string> {
    return this;
  }

  next(): Promise<IteratorResult<Buffer | string>> {
    if (this.#finished) {
      this.#close();
      return Promise.resolve(DONE);
    }
    if (!this.#opened) {
      this.#opened = true;
      // Iterated from here on, so that whenReadable asks the subscription itself: an idle
      // subscriber is then not pulled (and holds no pending next()) until its first events.
      // The batches are encoded as the subscription settles each next(): one promise per batch.
      this.#batches = this.#subscription.map<Buffer | string>(this);
      return Promise.resolve({ done: false, value: this.#opening });
    }
    return this.#batches!.next();
  }

  async return(): Promise<IteratorResult<Buffer | string>> {
    this.#finished = true;
    await this.#batches?.return?.();
    this.#close();
    return DONE;
  }

  /** BatchMapping: a batch as the bytes of its frames. */
  batch(items: readonly StreamItem[]): Buffer | string {
    streamMetrics.delivered(items.length);
    return this.#encoder.encode(items);
  }

  /** BatchMapping: the end by an error. */
  failed(error: Error): IteratorResult<Buffer | string> {
    if (!(error instanceof ServiceUnavailable)) {
      this.#close();
      throw error;
    }
    // The price log went away mid-stream: end cleanly with a hint, so clients come back later.
    this.#log.warn('price log unavailable; stream ended with a retry hint', this.#requestId === undefined ? { error } : { request_id: this.#requestId, error });
    this.#finished = true;
    return { done: false, value: encodeRetry(this.#unavailableRetryMs) };
  }

  /** BatchMapping: the clean end. */
  done(): void {
    this.#close();
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscription.end();
    this.#onClose?.();
  }
}
