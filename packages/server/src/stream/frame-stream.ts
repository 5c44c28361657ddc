// A streamed response body: batches of encoded frames in order, which the one writer copies to the
// socket as they come. Stopping early (the client left, the server closes) returns the iterator,
// which must release whatever the stream holds even if it was never iterated.
export interface FrameStream extends AsyncIterable<string | Buffer> {
  /** Bytes produced upstream and not yet handed out: they count toward the subscriber's limit. */
  readonly pendingBytes: number;
}

export function isFrameStream(body: unknown): body is FrameStream {
  return typeof body === 'object' && body !== null && Symbol.asyncIterator in body;
}
