// Requests made during one turn of the event loop, answered together by one statement: under load
// the database's cost per statement (a round trip, a backend wake-up) is shared by many requests;
// alone, a request waits only for the end of the current turn (setImmediate).
// Guarantees: every request pushed is handed to `answer` exactly once, in a batch of at most
// `maxBatch`, in the order pushed; at most `maxInFlight` answers run at once, and requests pushed
// meanwhile wait for the next one to finish. `answer` settles its requests itself and must not
// reject (a rejection would leave its batch unsettled).
export class TurnBatches<T> {
  readonly #queue: T[] = [];
  readonly #answer: (batch: T[]) => Promise<void>;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  #inFlight = 0;

  constructor(answer: (batch: T[]) => Promise<void>, options: { maxBatch: number; maxInFlight?: number }) {
    this.#answer = answer;
    this.#maxBatch = options.maxBatch;
    this.#maxInFlight = options.maxInFlight ?? Infinity;
  }

  push(request: T): void {
    this.#queue.push(request);
    if (this.#queue.length === 1 && this.#inFlight < this.#maxInFlight) setImmediate(this.#next);
  }

  readonly #next = (): void => {
    if (this.#queue.length === 0 || this.#inFlight >= this.#maxInFlight) return;
    const batch = this.#queue.splice(0, this.#maxBatch);
    this.#inFlight += 1;
    if (this.#queue.length > 0 && this.#inFlight < this.#maxInFlight) setImmediate(this.#next);
    void this.#answer(batch).finally(() => {
      // Only a full house can have left requests waiting with no turn scheduled for them.
      const wasFull = this.#inFlight === this.#maxInFlight;
      this.#inFlight -= 1;
      if (wasFull && this.#queue.length > 0) setImmediate(this.#next);
    });
  };
}
