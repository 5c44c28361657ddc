// The one writer of a streamed response body: pulls encoded frames from an async iterable and
// writes them through `res.write`, after the caller has written the head. It knows nothing of
// what the frames say.
//
// Guarantees and limits:
// - every byte goes through res.write/res.end, so Node frames the chunked body and a response
//   queued behind another on the connection waits its turn;
// - each pull takes everything the body has ready (a batch), which goes out as one write; a body
//   that can say when it is readable (whenReadable) is pulled only then, so an idle subscriber
//   holds no pending promise;
// - above WRITE_HIGH_WATER bytes in the response's buffer the writer waits for 'drain' before
//   pulling again, so whatever arrives meanwhile waits upstream (`pendingBytes`), where it counts
//   toward the limit too; the body's `signal` ends that wait when the body ends;
// - a heartbeat frame goes out every `heartbeatMs`, also while waiting;
// - a consumer is cut (metrics, one warning, socket destroyed) once more than `maxBufferBytes`
//   are held for it: the response's buffer and `pendingBytes`, checked at every write, plus what
//   the kernel holds unsent or unacknowledged (kernel-send-queue.ts), checked at every heartbeat;
//   a body that fails with SubscriberOverflow (its own queue over the limit) is cut the same way;
// - the response ends cleanly when the body ends; it is destroyed when the body fails otherwise
//   (a client then sees an aborted response, not a clean end); when the client goes away the
//   body is returned (ended). writeFrames never rejects.
import type { ServerResponse } from 'node:http';
import type { Logger } from '../logger.ts';
import { streamMetrics } from '../metrics.ts';
import { SubscriberOverflow } from '../stream/subscription.ts';
import type { KernelSendQueues } from './kernel-send-queue.ts';

/** A streamed body: encoded frames, pulled in batches. */
export interface FrameStream extends AsyncIterable<string | Buffer> {
  /** Bytes queued upstream and not yet pulled; they count toward the buffer limit. */
  readonly pendingBytes: number;
  /** Aborted when the body ends upstream, so a wait for 'drain' does not outlast it. */
  readonly signal?: AbortSignal;
  /**
   * True when a next() would settle at once; otherwise false, and `listener` is called once
   * when it would. The writer then pulls only when there is something to take, instead of
   * holding a pending next() per idle subscriber across turns of the event loop (at fan-out
   * scale the scavenger promotes those, and they die in the old generation). Without it, the
   * writer pulls right after each write.
   */
  whenReadable?(listener: () => void): boolean;
}

export function isFrameStream(body: unknown): body is FrameStream {
  return typeof body === 'object' && body !== null && Symbol.asyncIterator in body;
}

/** Ends a body that will not be written (or no further): its iterator's return() releases it, iterated or not. */
export async function closeFrames(body: FrameStream): Promise<void> {
  await body[Symbol.asyncIterator]().return?.();
}

export interface WriteFramesOptions {
  heartbeatMs: number;
  heartbeatFrame: string | Buffer;
  maxBufferBytes: number;
  kernelQueues: Pick<KernelSendQueues, 'bytes'>;
  log: Logger;
}

/** Above this many bytes in the response's buffer the writer waits for 'drain' before pulling. */
export const WRITE_HIGH_WATER = 64 * 1024;

export function writeFrames(res: ServerResponse, body: FrameStream, options: WriteFramesOptions): Promise<void> {
  const { heartbeatMs, heartbeatFrame, maxBufferBytes, kernelQueues, log } = options;
  const written = Promise.withResolvers<void>();
  const frames = body[Symbol.asyncIterator]();
  let bodyDone = false;
  const stopBody = (): void => {
    if (bodyDone) return;
    bodyDone = true;
    frames.return?.().catch((error: unknown) => log.warn('stream body failed to stop', { error }));
  };
  const cut = (kernelBytes: number): void => {
    streamMetrics.slowConsumerCut();
    log.warn('slow subscriber disconnected', { buffered_bytes: res.writableLength + body.pendingBytes, kernel_bytes: kernelBytes });
    res.destroy();
    stopBody();
  };
  const heartbeat = setInterval(() => {
    if (res.destroyed) return;
    res.write(heartbeatFrame);
    const inKernel = res.socket === null ? 0 : kernelQueues.bytes(res.socket);
    if (res.writableLength + body.pendingBytes + inKernel > maxBufferBytes) cut(inKernel);
  }, heartbeatMs);
  heartbeat.unref();
  // Gone: the body is returned, and a writer waiting for it to be readable pulls its end.
  const onClose = (): void => {
    stopBody();
    if (awaitingReadable) onReadable();
  };
  res.once('close', onClose);
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    clearInterval(heartbeat);
    res.off('close', onClose);
    stopBody();
    written.resolve();
  };
  const fail = (error: unknown): void => {
    bodyDone = true;
    if (!res.destroyed) {
      if (error instanceof SubscriberOverflow) cut(0);
      else {
        log.warn('stream ended by an error', { error });
        res.destroy();
      }
    }
    finish();
  };
  // A loop of then() callbacks made once, rather than an async function, so that a pull
  // allocates only its promise and reaction, which die within the turn.
  const pull = (): void => {
    try {
      frames.next().then(onFrames, fail);
    } catch (error) {
      fail(error);
    }
  };
  let awaitingReadable = false;
  const onReadable = (): void => {
    awaitingReadable = false;
    pull();
  };
  const pullWhenReadable = (): void => {
    try {
      if (body.whenReadable === undefined || body.whenReadable(onReadable)) pull();
      else awaitingReadable = true;
    } catch (error) {
      fail(error);
    }
  };
  const onFrames = (result: IteratorResult<string | Buffer>): void => {
    try {
      if (result.done === true) {
        bodyDone = true;
        if (!res.destroyed) res.end();
        finish();
        return;
      }
      if (res.destroyed) {
        finish();
        return;
      }
      // res.write frames a chunk as three socket writes (size line, bytes, CRLF). It corks the
      // socket and schedules the uncork for the next tick unless the socket is corked already;
      // corking it here sends the three as one writev now, without the scheduled uncork.
      // (res.cork() would not: a corked response holds the chunk and writes its framing after
      // it has uncorked the socket, as separate writes.)
      const socket = res.socket;
      socket?.cork();
      res.write(result.value);
      socket?.uncork();
      if (res.writableLength + body.pendingBytes > maxBufferBytes) {
        cut(0);
        finish();
      } else if (res.writableLength > WRITE_HIGH_WATER) {
        void drained(res, body.signal).then(pullWhenReadable);
      } else {
        pullWhenReadable();
      }
    } catch (error) {
      fail(error);
    }
  };
  pull();
  return written.promise;
}

/** Settles when the response's buffer drains, the connection closes or `signal` aborts. */
function drained(res: ServerResponse, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    signal?.addEventListener('abort', done, { once: true });
    if (signal?.aborted === true) done();
  });
}
