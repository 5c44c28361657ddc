// The live path of the SSE fan-out: the frames the hub offers a subscriber in one turn of the event
// loop go out at the end of that turn as ONE HTTP/1.1 chunk in one socket write, and the chunk of
// each distinct run of frames is built once, however many subscribers receive it.
//
// Why: a batch read from the log is offered within one turn. With res.write per frame, every frame
// costs four corked writes and a writev per subscriber, and becomes a chunk of its own, which the
// client's HTTP parser hands up one callback per chunk: with thousands of subscribers per client
// process that is where a client spends its time. Subscribers that get the same frames in the same
// order (the same topics) share one chunk, encoded once and written as is to each socket.
//
// Limits: only for a chunked response that owns its socket (see LiveFrames.attach). Frames wait
// at most until the end of the current turn; `flush()` writes a subscriber's waiting frames at
// once, and must come before anything else is written to its response (res.end()).
import type { Socket } from 'node:net';

/** A live event's SSE frame and its length in bytes; built once per event. */
export interface EventFrame {
  readonly text: string;
  readonly bytes: number;
}

export function eventFrame(text: string): EventFrame {
  return { text, bytes: Buffer.byteLength(text) };
}

/**
 * One run of frames within the current turn: `text` is every frame from the start of the run to
 * this one. A run that continues with a given frame is shared by every subscriber that got the
 * same frames so far, so each distinct run is concatenated, and framed as a chunk, once.
 */
class Run {
  readonly text: string;
  readonly bytes: number;
  #chunk: Buffer | null = null;
  #onlyFrame: EventFrame | null = null;
  #onlyNext: Run | null = null;
  #next: Map<EventFrame, Run> | null = null;

  constructor(text: string, bytes: number) {
    this.text = text;
    this.bytes = bytes;
  }

  /**
   * The run as one HTTP/1.1 chunk, encoded once: a Buffer goes to each socket without being
   * encoded again, and a write the kernel cannot take at once holds this Buffer, not a copy.
   */
  get chunk(): Buffer {
    return (this.#chunk ??= Buffer.from(`${this.bytes.toString(16)}\r\n${this.text}\r\n`));
  }

  /** The run that continues this one with `frame`. (Not `then`: a Run must never look like a promise.) */
  followedBy(frame: EventFrame): Run {
    if (this.#onlyFrame === frame) return this.#onlyNext as Run;
    let next = this.#next?.get(frame);
    if (next !== undefined) return next;
    next = new Run(this.text + frame.text, this.bytes + frame.bytes);
    if (this.#onlyFrame === null) {
      this.#onlyFrame = frame;
      this.#onlyNext = next;
    } else {
      (this.#next ??= new Map()).set(frame, next);
    }
    return next;
  }
}

/** A subscriber's socket and the run waiting for it this turn (null: nothing waits). */
interface Pending {
  readonly socket: Socket;
  run: Run | null;
  readonly afterWrite: () => void;
}

/** One subscriber's socket on the live path. */
export interface LiveTarget {
  /** Queues a frame for the end of this turn. */
  write(frame: EventFrame): void;
  /** Writes the frames queued so far now. */
  flush(): void;
}

export class LiveFrames {
  /** Runs starting with each frame, for the current turn. */
  #starts = new Map<EventFrame, Run>();
  #pending: Pending[] = [];
  readonly #flushAll = (): void => {
    const pending = this.#pending;
    this.#pending = [];
    this.#starts = new Map();
    for (const target of pending) writeRun(target);
  };

  /**
   * The live writer for a response whose body is chunked and that owns `socket` (its headers are
   * out and no earlier response on the connection is still being written). `afterWrite` runs after
   * each socket write, for the caller's buffer limit.
   */
  attach(socket: Socket, afterWrite: () => void): LiveTarget {
    const target: Pending = { socket, run: null, afterWrite };
    return {
      write: (frame) => {
        if (target.run !== null) {
          target.run = target.run.followedBy(frame);
          return;
        }
        let run = this.#starts.get(frame);
        if (run === undefined) {
          run = new Run(frame.text, frame.bytes);
          this.#starts.set(frame, run);
        }
        target.run = run;
        this.#pending.push(target);
        if (this.#pending.length === 1) process.nextTick(this.#flushAll);
      },
      flush: () => writeRun(target),
    };
  }
}

function writeRun(target: Pending): void {
  const run = target.run;
  if (run === null) return;
  target.run = null;
  if (target.socket.destroyed) return;
  target.socket.write(run.chunk);
  target.afterWrite();
}
