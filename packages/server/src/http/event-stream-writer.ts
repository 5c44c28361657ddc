// The one writer of a streamed response body: pulls encoded frames from a StreamBody (an async
// iterable) and writes them through `res.write`, after the caller has written the head. It knows
// nothing of what the frames say, and is the one reader of a body's Readiness
// (stream/readiness.ts).
//
// Guarantees and limits:
// - every byte goes through res.write/res.end, so Node frames the chunked body and a response
//   queued behind another on the connection waits its turn;
// - each pull takes everything the body has ready (a batch), which goes out as one write; a body
//   with a Readiness is pulled only when it is readable, so an idle subscriber holds no pending
//   promise, and what its take() hands over is written at once (a live batch costs no promise
//   and no reaction job; next() serves the rest: the opening, replay pages, plain iterables);
// - one write at a time: the writer pulls again once the previous write has been handed to the
//   kernel (its callback), so whatever arrives meanwhile waits upstream (`pendingBytes`), where
//   it counts toward the limit too, and goes out as the next batch. A consumer that reads slowly
//   thus gets fewer, larger writes instead of a pile of small ones in the response's buffer;
//   the body's `signal` ends that wait when the body ends;
// - a heartbeat frame goes out every `heartbeatMs`, also while waiting;
// - a consumer is cut (metrics, one warning, socket destroyed) once more than `maxBufferBytes`
//   are held for it: the response's buffer and `pendingBytes`, checked at every write, plus what
//   the kernel holds unsent or unacknowledged (kernel-send-queue.ts), checked at every heartbeat
//   for a socket whose kernel buffer is full (bytes wait in the response's buffer);
//   a body that fails with SubscriberOverflow (its own queue over the limit) is cut the same way;
// - the response ends cleanly when the body ends; it is destroyed when the body fails otherwise
//   (a client then sees an aborted response, not a clean end); when the client goes away the
//   body is returned (ended). writeFrames never rejects.
import type { ServerResponse } from 'node:http';
import type { Logger } from '../logger.ts';
import { streamMetrics } from '../metrics.ts';
import { readinessOf, type Readiness, type StreamBody } from '../stream/readiness.ts';
import { SubscriberOverflow } from '../stream/subscription.ts';
import type { KernelSendQueues } from './kernel-send-queue.ts';

export interface WriteFramesOptions {
  heartbeatMs: number;
  heartbeatFrame: string | Buffer;
  maxBufferBytes: number;
  kernelQueues: Pick<KernelSendQueues, 'bytes'>;
  log: Logger;
  /** Named in the writer's warnings (`request_id`). */
  requestId?: string;
}

export function writeFrames(res: ServerResponse, body: StreamBody, options: WriteFramesOptions): Promise<void> {
  return new FrameWriter(res, body, options).written;
}

/**
 * One response's writer: a loop of then() callbacks made once per writer rather than an async
 * function, and one object with its methods on the prototype rather than closures, as one lives
 * for every open stream, idle or not (bench/README.md, "The stream's memory").
 */
class FrameWriter {
  readonly written: Promise<void>;
  readonly #res: ServerResponse;
  /** The body's Readiness; null for a plain AsyncIterable (pulled after each write). */
  readonly #readiness: Readiness | null;
  readonly #frames: AsyncIterator<string | Buffer>;
  readonly #heartbeatFrame: string | Buffer;
  readonly #maxBufferBytes: number;
  readonly #kernelQueues: Pick<KernelSendQueues, 'bytes'>;
  readonly #log: Logger;
  readonly #requestId: string | undefined;
  readonly #heartbeat: NodeJS.Timeout;
  #resolveWritten!: () => void;
  #bodyDone = false;
  #finished = false;
  #awaitingReadable = false;
  /** A write is not yet handed to the kernel; the next pull waits for it. */
  #writing = false;
  /** Whether #onWritten listens to the body's signal (only while a write waits for the kernel). */
  #watchingSignal = false;
  // The callbacks handed out (promise reactions, the readable listener, the close listener).
  readonly #onFrames = (result: IteratorResult<string | Buffer>): void => this.#write(result);
  readonly #fail = (error: unknown): void => this.#failWith(error);
  readonly #onReadable = (): void => {
    this.#awaitingReadable = false;
    this.#pull();
  };
  // The write is out (or failed: the socket is gone), or the body ended while it waited.
  readonly #onWritten = (): void => {
    if (!this.#writing || this.#finished) return;
    this.#stopWaitingForWrite();
    this.#pullOnceReadable();
  };
  // Gone: the body is returned, and a writer waiting for it to be readable, or for its last
  // write, pulls its end.
  readonly #onClose = (): void => {
    this.#stopBody();
    if (this.#awaitingReadable) this.#onReadable();
    else this.#onWritten();
  };

  constructor(res: ServerResponse, body: StreamBody, options: WriteFramesOptions) {
    this.#res = res;
    this.#readiness = readinessOf(body) ?? null;
    this.#frames = body[Symbol.asyncIterator]();
    this.#heartbeatFrame = options.heartbeatFrame;
    this.#maxBufferBytes = options.maxBufferBytes;
    this.#kernelQueues = options.kernelQueues;
    this.#log = options.log;
    this.#requestId = options.requestId;
    this.written = new Promise((resolve) => (this.#resolveWritten = resolve));
    this.#heartbeat = setInterval(FrameWriter.#beat, options.heartbeatMs, this);
    this.#heartbeat.unref();
    res.on('close', this.#onClose);
    this.#pull();
  }

  /**
   * The heartbeat timer's callback, one function for every writer (the timer passes the writer):
   * writes a heartbeat, and cuts the consumer when too much is held for it.
   */
  static #beat(writer: FrameWriter): void {
    const res = writer.#res;
    if (res.destroyed) return;
    // The kernel is asked only about a socket that refused bytes (some still wait in the
    // response's buffer since the last heartbeat): one that took them all had room in its send
    // buffer, and reading /proc costs the whole thread. Read before the heartbeat's own write,
    // which waits in the (corked) buffer until the end of this tick.
    const refused = res.writableLength > 0;
    res.write(writer.#heartbeatFrame);
    const inKernel = res.socket === null || !refused ? 0 : writer.#kernelQueues.bytes(res.socket);
    if (res.writableLength + writer.#pendingBytes + inKernel > writer.#maxBufferBytes) writer.#cut(inKernel);
  }

  get #pendingBytes(): number {
    return this.#readiness?.pendingBytes ?? 0;
  }

  #warn(message: string, fields: Record<string, unknown>): void {
    this.#log.warn(message, this.#requestId === undefined ? fields : { request_id: this.#requestId, ...fields });
  }

  #stopBody(): void {
    if (this.#bodyDone) return;
    this.#bodyDone = true;
    this.#frames.return?.().catch((error: unknown) => this.#warn('stream body failed to stop', { error }));
  }

  #cut(kernelBytes: number): void {
    streamMetrics.slowConsumerCut();
    this.#warn('slow subscriber disconnected', { buffered_bytes: this.#res.writableLength + this.#pendingBytes, kernel_bytes: kernelBytes });
    this.#res.destroy();
    this.#stopBody();
  }

  #stopWaitingForWrite(): void {
    this.#writing = false;
    if (this.#watchingSignal) {
      this.#watchingSignal = false;
      this.#readiness?.signal.removeEventListener('abort', this.#onWritten);
    }
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#stopWaitingForWrite();
    clearInterval(this.#heartbeat);
    this.#res.off('close', this.#onClose);
    this.#stopBody();
    this.#resolveWritten();
  }

  /**
   * Ends the response after an error of the body or of the writing, and stops the body (#finish):
   * after its own error a body's return() is a no-op, after a failed write it releases the
   * subscription behind it.
   */
  #failWith(error: unknown): void {
    if (!this.#res.destroyed) {
      if (error instanceof SubscriberOverflow) this.#cut(0);
      else {
        this.#warn('stream ended by an error', { error });
        this.#res.destroy();
      }
    }
    this.#finish();
  }

  /** Takes what the body has ready at once and writes it now; otherwise asks next() and writes when it settles. */
  #pull(): void {
    try {
      const ready = this.#readiness === null ? null : (this.#readiness.take() as IteratorResult<string | Buffer> | null);
      if (ready === null) this.#frames.next().then(this.#onFrames, this.#fail);
      else this.#write(ready);
    } catch (error) {
      this.#failWith(error);
    }
  }

  #pullOnceReadable(): void {
    try {
      const readiness = this.#readiness;
      if (readiness === null || readiness.whenReadable(this.#onReadable)) this.#pull();
      else this.#awaitingReadable = true;
    } catch (error) {
      this.#failWith(error);
    }
  }

  #write(result: IteratorResult<string | Buffer>): void {
    const res = this.#res;
    try {
      if (result.done === true) {
        this.#bodyDone = true;
        if (!res.destroyed) res.end();
        this.#finish();
        return;
      }
      if (res.destroyed) {
        this.#finish();
        return;
      }
      // res.write frames a chunk as three socket writes (size line, bytes, CRLF). It corks the
      // socket and schedules the uncork for the next tick unless the socket is corked already;
      // corking it here sends the three as one writev now, without the scheduled uncork.
      // (res.cork() would not: a corked response holds the chunk and writes its framing after
      // it has uncorked the socket, as separate writes.)
      const socket = res.socket;
      this.#writing = true;
      socket?.cork();
      res.write(result.value, this.#onWritten);
      socket?.uncork();
      if (res.writableLength + this.#pendingBytes > this.#maxBufferBytes) {
        this.#cut(0);
        this.#finish();
      } else if (res.writableLength > 0 && this.#readiness !== null && !this.#watchingSignal) {
        // The kernel did not take it all: the callback waits for the client to read, and the
        // body may end (overflow) meanwhile.
        this.#watchingSignal = true;
        this.#readiness.signal.addEventListener('abort', this.#onWritten, { once: true });
      }
    } catch (error) {
      this.#failWith(error);
    }
  }
}
