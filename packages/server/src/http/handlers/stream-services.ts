// The stream listener's handler type: what its handlers use is the stream server's PriceStreams.
import type { ApiOperationId, OperationId } from '@catalog/contract';
import type { Handler } from '../handler-types.ts';
import type { PriceStreams } from '../stream-server.ts';

export type StreamOperationId = Exclude<OperationId, ApiOperationId>;

/** What the stream listener's handlers use. */
export interface StreamServices {
  prices: PriceStreams;
}

export type StreamHandler<Id extends StreamOperationId> = Handler<Id, StreamServices>;
