// The batch encoder: a batch of stream items in, the bytes of their frames (@catalog/contract/stream) out, in
// order. Pure in effect: the same batch always gives the same bytes, and nothing is written
// anywhere; what it keeps is a cache, so that a fan-out to thousands of subscribers encodes
// each thing once:
// - an event's frame is encoded once, however many subscribers it goes to;
// - the bytes of a run of frames (a batch of events) are concatenated once and the same Buffer
//   is returned to every subscriber that gets the same run, i.e. the same events in the same
//   order (the same topics).
// Runs are kept as long as they are in use: at the end of each turn of the event loop in which
// something was encoded, the runs that turn did not use are dropped. The hub wakes consumers a
// slice per turn, so every slice of one round of events shares its runs (one Buffer per round,
// not per slice: bench/README.md, "The stream's memory"), and a round's runs go at the end of
// the next round's first turn. The frame cache lives as long as the events.
// A batch with a `reset` (replay only, rare) is encoded directly, without the run cache.
import { encodeEvent, encodeReset } from '@catalog/contract/stream';
import type { EventItem, StreamItem } from './subscription.ts';
import type { StoredPriceEvent } from '../prices/price-log.ts';

/**
 * One run of frames within the current turn: `bytes` are every frame from the start of the run
 * to this one. A run that continues with a given frame is shared by every subscriber that got
 * the same frames so far, so each distinct run is concatenated once. A run holds the run it
 * continues and its last frame, not its text: its bytes are the frames' bytes copied once, when
 * it is handed out (no string is concatenated and encoded again per run, which a run that only
 * one subscriber gets, the common case when subscribers watch different events, would pay in full).
 */
class Run {
  /** The run this one continues (null for a one-frame run), and the frame it ends with. */
  readonly #previous: Run | null;
  readonly #last: Buffer;
  readonly #frames: number;
  readonly #byteLength: number;
  #bytes: Buffer | null;
  #onlyFrame: Run | null = null;
  #onlyNext: Run | null = null;
  #next: Map<Run, Run> | null = null;
  /** The turn that last used this run as a start (BatchEncoder's count). */
  usedInTurn = 0;

  constructor(previous: Run | null, last: Buffer) {
    this.#previous = previous;
    this.#last = last;
    this.#frames = previous === null ? 1 : previous.#frames + 1;
    this.#byteLength = previous === null ? last.byteLength : previous.#byteLength + last.byteLength;
    this.#bytes = previous === null ? last : null;
  }

  /**
   * The run's bytes, made once. A Buffer is written to each socket as it is: not encoded again
   * per subscriber, and a write the kernel cannot take at once holds this Buffer, not a copy.
   */
  get bytes(): Buffer {
    if (this.#bytes !== null) return this.#bytes;
    // Only the runs handed out are turned into bytes.
    const frames = new Array<Buffer>(this.#frames);
    frames[this.#frames - 1] = this.#last;
    for (let at = this.#frames - 2, run = this.#previous; run !== null; at -= 1, run = run.#previous) frames[at] = run.#last;
    return (this.#bytes = Buffer.concat(frames, this.#byteLength));
  }

  /**
   * The run that continues this one with `frame` (a one-frame run). Most runs have a single
   * continuation in a turn (subscribers with the same topics), so it is kept outside the Map.
   */
  followedBy(frame: Run): Run {
    if (this.#onlyFrame === frame) return this.#onlyNext as Run;
    let next = this.#next?.get(frame);
    if (next !== undefined) return next;
    next = new Run(this, frame.#last);
    if (this.#onlyFrame === null) {
      this.#onlyFrame = frame;
      this.#onlyNext = next;
    } else {
      (this.#next ??= new Map()).set(frame, next);
    }
    return next;
  }
}

export class BatchEncoder {
  /** Each event's frame, as a one-frame run: its bytes are the start of every run through it. */
  readonly #frames = new WeakMap<StoredPriceEvent, Run>();
  /** Runs of more than one frame, by their first frame, each with the turn that last used it. */
  readonly #starts = new Map<Run, Run>();
  #turn = 0;
  #endScheduled = false;
  readonly #endTurn = (): void => {
    this.#endScheduled = false;
    for (const [frame, run] of this.#starts) if (run.usedInTurn !== this.#turn) this.#starts.delete(frame);
    this.#turn += 1;
  };

  /** The bytes of `batch`'s frames, in order; empty for an empty batch. */
  encode(batch: readonly StreamItem[]): Buffer {
    const first = batch[0];
    if (first === undefined) return Buffer.alloc(0);
    if (!batch.every(isEventItem)) return Buffer.from(batch.map(encodeItem).join(''));
    const start = this.#frameOf(first as EventItem);
    if (batch.length === 1) return start.bytes;
    let run = this.#starts.get(start);
    if (run === undefined) {
      run = new Run(null, start.bytes);
      this.#starts.set(start, run);
    }
    run.usedInTurn = this.#turn;
    if (!this.#endScheduled) {
      this.#endScheduled = true;
      process.nextTick(this.#endTurn);
    }
    for (let at = 1; at < batch.length; at += 1) run = run.followedBy(this.#frameOf(batch[at]!));
    return run.bytes;
  }

  #frameOf({ event }: EventItem): Run {
    let frame = this.#frames.get(event);
    if (frame === undefined) {
      frame = new Run(null, Buffer.from(encodeEvent({ id: event.id, event: event.topic, data: event.data })));
      this.#frames.set(event, frame);
    }
    return frame;
  }
}

const isEventItem = (item: StreamItem): item is EventItem => item.kind === 'event';

function encodeItem(item: StreamItem): string {
  return item.kind === 'event'
    ? encodeEvent({ id: item.event.id, event: item.event.topic, data: item.event.data })
    : encodeReset({ requested_id: item.requestedId, oldest_id: item.oldestId });
}
