// The loops the monitors' reader (monitor-reader.ts) and sender (monitor-sender.ts) run, and the
// link between them (each runs in a thread of its own: monitor-thread.ts).
import { setImmediate as yieldToIo, setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../logger.ts';
import type { MonitorStore } from './monitor-store.ts';

export const DEFAULT_POLL_MS = 250;
/** The first wait after a failed round; it doubles with each failure in a row, up to the poll interval. */
export const FIRST_RETRY_MS = 10;
/**
 * Items per store call between two turns of the event loop (monitors per advance(), filters
 * compiled, baselines read): what else the thread has to do is done between the slices.
 */
const SLICE = 1000;

/** A loop's sleep that another part of the delivery can end early. */
export class Wakeable {
  #wake: (() => void) | null = null;
  #woken = false;

  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** Resolves after `ms`, when woken (at once if it was woken since the last sleep), or when `signal` aborts. */
  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (this.#woken) {
      this.#woken = false;
      return;
    }
    if (signal.aborted) return;
    // A timer and a callback rather than an aborted delay(): a wake costs no AbortError.
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.#wake = done;
    });
    this.#woken = false;
  }
}

/**
 * Runs `round` until `signal` aborts: again at once when it says there is more, else when woken or
 * after `pollMs`, and never sooner than `spacingMs` after the previous round began. A failed round
 * is logged once (and its recovery), and tried again after FIRST_RETRY_MS, doubling up to `pollMs`.
 */
export async function runLoop(
  what: string,
  round: () => Promise<boolean>,
  { wakeable, signal, logger, pollMs, spacingMs }: { wakeable: Wakeable; signal: AbortSignal; logger: Logger; pollMs: number; spacingMs: number },
): Promise<void> {
  let failures = 0;
  while (!signal.aborted) {
    let more: boolean;
    const startedAt = Date.now();
    try {
      more = await round();
      if (failures > 0) logger.info(`monitors: ${what} works again`);
      failures = 0;
    } catch (error) {
      if (failures === 0) logger.warn(`monitors: could not ${what}; trying again`, { error });
      failures += 1;
      // A store busy for a moment (another process's write) is tried again soon, a longer outage at the poll interval.
      await sleep(Math.min(pollMs, FIRST_RETRY_MS * 2 ** (failures - 1)), signal);
      continue;
    }
    if (more || signal.aborted) continue;
    await wakeable.sleep(pollMs, signal);
    const early = startedAt + Math.min(spacingMs, pollMs) - Date.now();
    if (early > 0) await sleep(early, signal);
  }
}

/** Runs `work` on `items` SLICE at a time (`at`: the slice's first index), the thread's event loop free between slices. */
export async function inSlices<T>(items: readonly T[], work: (slice: readonly T[], at: number) => Promise<void>): Promise<void> {
  for (let at = 0; at < items.length; at += SLICE) {
    if (at > 0) await yieldToIo();
    await work(items.slice(at, at + SLICE), at);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => undefined);
}

const BEHIND = 0;
const FORMED = 1;
const WRITING = 2;
/** How long a wait for the write turn sleeps before it looks again (a release notifies at once). */
const TURN_LOOK_MS = 100;

/**
 * What the reader tells the sender, in memory the two threads share (a SharedArrayBuffer, given to
 * both in their workerData): that it is behind (a flag the sender reads before each claim, so no
 * message in flight can let an attempt start once the reader has said it is behind), and that it
 * formed deliveries (a counter the sender waits on with Atomics.waitAsync). It also holds a write
 * turn (takingTurns). One reader and any number of senders may share a link; a link works within
 * one thread too.
 */
export class DeliveryLink {
  readonly buffer: SharedArrayBuffer;
  readonly #cells: Int32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT)) {
    this.buffer = buffer;
    this.#cells = new Int32Array(buffer);
  }

  /** Reader: whether it is a full page or more behind the log (the sender then starts no attempt). */
  setBehind(behind: boolean): void {
    if (Atomics.exchange(this.#cells, BEHIND, behind ? 1 : 0) === 1 && !behind) this.formed();
  }

  get behind(): boolean {
    return Atomics.load(this.#cells, BEHIND) === 1;
  }

  /** Reader: it stored deliveries due now, or changes that may form one. */
  formed(): void {
    Atomics.add(this.#cells, FORMED, 1);
    Atomics.notify(this.#cells, FORMED);
  }

  /** Sender: calls `onFormed` after each formed() (several at once may be one call) until `signal` aborts. */
  async watch(onFormed: () => void, signal: AbortSignal, pollMs: number): Promise<void> {
    let seen = Atomics.load(this.#cells, FORMED);
    const stop = (): void => void Atomics.notify(this.#cells, FORMED);
    signal.addEventListener('abort', stop, { once: true });
    try {
      while (!signal.aborted) {
        // The timeout only bounds how long a wait outlives an abort that notify() raced with.
        const wait = Atomics.waitAsync(this.#cells, FORMED, seen, pollMs);
        if (wait.async) await wait.value;
        const now = Atomics.load(this.#cells, FORMED);
        if (now !== seen) {
          seen = now;
          if (!signal.aborted) onFormed();
        }
      }
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  /**
   * Runs `write` in the link's write turn: one at a time over every thread on the link, the others
   * waiting on their event loops (Atomics.waitAsync) and woken as it ends. Not fair: a waiter may
   * be overtaken, never shut out for long, as every write is short. A thread that dies in its turn
   * never gives it back; a monitor thread's death stops the service (monitor-thread.ts `failed`).
   */
  async inTurn<T>(write: () => Promise<T>): Promise<T> {
    while (Atomics.compareExchange(this.#cells, WRITING, 0, 1) !== 0) {
      const wait = Atomics.waitAsync(this.#cells, WRITING, 1, TURN_LOOK_MS);
      if (wait.async) await wait.value;
    }
    try {
      return await write();
    } finally {
      Atomics.store(this.#cells, WRITING, 0);
      Atomics.notify(this.#cells, WRITING, 1);
    }
  }
}

/**
 * `store` with its delivery writes (advance, claimDue, recordAttempts) made in `link`'s write turn,
 * for an engine with one writer at a time (SQLite): the reader's and the sender's threads then
 * never wait on the database's lock, whose wait blocks a thread's event loop and sleeps in steps
 * past the moment the lock is free; each waits on its event loop for the turn instead.
 */
export function takingTurns(store: MonitorStore, link: DeliveryLink): MonitorStore {
  return {
    addMonitor: (...args) => store.addMonitor(...args),
    listMonitors: (...args) => store.listMonitors(...args),
    removeMonitor: (...args) => store.removeMonitor(...args),
    enableMonitor: (...args) => store.enableMonitor(...args),
    readerStates: () => store.readerStates(),
    filtersOf: (...args) => store.filtersOf(...args),
    baselinesOf: (...args) => store.baselinesOf(...args),
    deliveryTotals: () => store.deliveryTotals(),
    advance: (...args) => link.inTurn(() => store.advance(...args)),
    claimDue: (...args) => link.inTurn(() => store.claimDue(...args)),
    recordAttempts: (...args) => link.inTurn(() => store.recordAttempts(...args)),
  };
}
