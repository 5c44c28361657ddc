// Finds price events in raw SSE bytes without decoding them: every `"timestamp":"` marker is one
// event, and the 30 bytes after it are its ISO nanosecond timestamp. Frames may be split anywhere
// across chunks; the scanner carries the few bytes that could start an unfinished marker.
// Assumes payloads carry `timestamp` once, as PriceEvent does; anything else is not counted.
const MARKER = Buffer.from('"timestamp":"');
const TIMESTAMP_LENGTH = 30;

export class TimestampScanner {
  #rest: Buffer | null = null;

  /** Calls `onEvent` with each complete timestamp (latin1 text) found in `chunk`, in order. */
  scan(chunk: Buffer, onEvent: (timestamp: string) => void): void {
    const buffer = this.#rest === null ? chunk : Buffer.concat([this.#rest, chunk]);
    this.#rest = null;
    let position = 0;
    for (;;) {
      const at = buffer.indexOf(MARKER, position);
      if (at === -1) {
        const keepFrom = Math.max(position, buffer.length - MARKER.length + 1);
        if (keepFrom < buffer.length) this.#rest = Buffer.from(buffer.subarray(keepFrom));
        return;
      }
      const end = at + MARKER.length + TIMESTAMP_LENGTH;
      if (end > buffer.length) {
        this.#rest = Buffer.from(buffer.subarray(at));
        return;
      }
      onEvent(buffer.toString('latin1', at + MARKER.length, end));
      position = end;
    }
  }
}
