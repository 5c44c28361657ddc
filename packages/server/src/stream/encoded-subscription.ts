// A subscription as the body of a server-sent-events response: the `opening` frame (the `retry:`
// field), then each batch it yields, encoded by the batch encoder into the bytes of its frames,
// with the subscription's queued bytes for the writer's buffer limit and its end as a signal. No
// writing here (see http/event-stream-writer.ts). Once the body is finished, by its end or by its
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
import { encodeRetry } from './frames.ts';
import type { Subscription } from './subscription.ts';

export interface EncodedSubscription extends AsyncIterable<Buffer | string> {
  /** Bytes of events queued for the subscriber and not yet taken. */
  readonly pendingBytes: number;
  /** Aborted when the subscription ends, however it ends. */
  readonly signal: AbortSignal;
  /** See FrameStream.whenReadable (http/event-stream-writer.ts). */
  whenReadable(listener: () => void): boolean;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

export interface EncodeSubscriptionOptions {
  /** The first frame of the body. */
  opening: string;
  unavailableRetryMs: number;
  log: Logger;
  onClose?: () => void;
}

export function encodeSubscription(subscription: Subscription, encoder: BatchEncoder, options: EncodeSubscriptionOptions): EncodedSubscription {
  let closed = false;
  let opened = false;
  let finished = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    subscription.end();
    options.onClose?.();
  };
  return {
    get pendingBytes() {
      return subscription.queuedBytes;
    },
    signal: subscription.signal,
    whenReadable: (listener) => !opened || finished || subscription.whenReadable(listener),
    [Symbol.asyncIterator]() {
      // The batches are encoded as the subscription settles each next(): one promise per batch.
      const batches = subscription.map<Buffer | string>({
        batch: (items) => {
          streamMetrics.delivered(items.length);
          return encoder.encode(items);
        },
        failed: (error) => {
          if (!(error instanceof ServiceUnavailable)) {
            close();
            throw error;
          }
          // The price log went away mid-stream: end cleanly with a hint, so clients come back later.
          options.log.warn('price log unavailable; stream ended with a retry hint', { error });
          finished = true;
          return { done: false, value: encodeRetry(options.unavailableRetryMs) };
        },
        done: close,
      });
      return {
        next: () => {
          if (finished) {
            close();
            return Promise.resolve(DONE);
          }
          if (!opened) {
            opened = true;
            return Promise.resolve({ done: false, value: options.opening });
          }
          return batches.next();
        },
        return: async () => {
          finished = true;
          await batches.return?.();
          close();
          return DONE;
        },
      };
    },
  };
}
