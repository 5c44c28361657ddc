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
import type { StreamItem, Subscription } from './subscription.ts';

export interface EncodedSubscription extends AsyncIterable<Buffer | string> {
  /** Bytes of events queued for the subscriber and not yet taken. */
  readonly pendingBytes: number;
  /** Aborted when the subscription ends, however it ends. */
  readonly signal: AbortSignal;
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
    [Symbol.asyncIterator]() {
      const batches = subscription[Symbol.asyncIterator]();
      let opened = false;
      let finished = false;
      // By hand rather than an async generator: one promise per batch on the live path, and a
      // return() that ends the subscription at once, even while a pull waits for events.
      const encoded = (result: IteratorResult<readonly StreamItem[]>): IteratorResult<Buffer | string> => {
        if (result.done === true) {
          close();
          return DONE;
        }
        streamMetrics.delivered(result.value.length);
        return { done: false, value: encoder.encode(result.value) };
      };
      const retryHint = (error: unknown): IteratorResult<Buffer | string> => {
        if (!(error instanceof ServiceUnavailable)) {
          close();
          throw error;
        }
        // The price log went away mid-stream: end cleanly with a hint, so clients come back later.
        options.log.warn('price log unavailable; stream ended with a retry hint', { error });
        finished = true;
        return { done: false, value: encodeRetry(options.unavailableRetryMs) };
      };
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
          return batches.next().then(encoded, retryHint);
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
