// The one scheduler of work done between requests: what a search asked to be kept (a whole leaf, a
// bucket's bitset, a bucket's sorted members) is made here instead of by the search that asked,
// one task per turn of the event loop, after the I/O of that turn (setImmediate); and the longer
// jobs that yield on their own (a pair table's build), one at a time.
//
// Guarantees: a task runs at most once, and only if `valid()` still holds when its turn comes (what
// it makes of is still the index's: a range index not built again meanwhile); a task that throws is counted, never rethrown: the searches
// answer without what it would have made. Until a task runs, searches take the path of a first use.
// Limits: at most MAX_WAITING tasks wait; past that a request to make one is dropped, and a later
// use asks again. `fits` estimates a task's time from the tasks run so far (their time per unit of
// the cost their owners gave): none before the first has run.
const MAX_WAITING = 64;

export class IdleWork {
  /** Per key, the task (true when it ran, false when no longer valid) and its cost. */
  readonly #waiting = new Map<string, { make: () => boolean; cost: number }>();
  readonly #stats = { made: 0, failed: 0 };
  /** Milliseconds per unit of cost, a moving average over the tasks run with a cost. */
  #msPerUnit: number | undefined;
  /** The job running, if any (see `job`). */
  #job: Promise<void> | undefined;

  /**
   * Runs `make` between requests, unless a task is waiting under `key` already or the queue is
   * full. `cost`: its estimated work, in the caller's unit (word reads), which times it.
   */
  later(key: string, make: () => void, valid: () => boolean, cost = 0): void {
    if (this.#waiting.has(key) || this.#waiting.size >= MAX_WAITING) return;
    const run = (): boolean => {
      if (!valid()) return false;
      make();
      return true;
    };
    this.#waiting.set(key, { make: run, cost });
    if (this.#waiting.size === 1) setImmediate(() => this.#runNext());
  }

  /** Whether work of `cost` units is estimated to take at most `ms`, by the tasks timed so far; false before any. */
  fits(cost: number, ms: number): boolean {
    return this.#msPerUnit !== undefined && cost * this.#msPerUnit <= ms;
  }

  /**
   * Starts `run`, a job that yields to the event loop on its own, unless one is running: false
   * then, and the caller asks again later. The job must not reject.
   */
  job(run: () => Promise<void>): boolean {
    if (this.#job !== undefined) return false;
    this.#job = run().finally(() => (this.#job = undefined));
    return true;
  }

  /** Tasks run, and tasks that threw, since the start. */
  get stats(): { made: number; failed: number } {
    return { ...this.#stats };
  }

  /** Resolves once no task waits and no job runs. */
  async idle(): Promise<void> {
    while (this.#waiting.size > 0 || this.#job !== undefined) {
      await this.#job;
      if (this.#waiting.size > 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  #runNext(): void {
    const first = this.#waiting.entries().next();
    if (first.done === true) return;
    const [key, { make, cost }] = first.value;
    try {
      const started = performance.now();
      if (make() && cost > 0) {
        const sample = (performance.now() - started) / cost;
        this.#msPerUnit = this.#msPerUnit === undefined ? sample : 0.8 * this.#msPerUnit + 0.2 * sample;
      }
      this.#stats.made += 1;
    } catch {
      // Only a bug throws here (no I/O).
      this.#stats.failed += 1;
    } finally {
      this.#waiting.delete(key);
      if (this.#waiting.size > 0) setImmediate(() => this.#runNext());
    }
  }
}
