import { filterFromHeader } from '../../stream/event-filter.ts';
import { parseTopics } from '../../stream/topics.ts';
import type { StreamHandler } from './stream-services.ts';

// `Connection` is left to the listener: keep-alive, or close while it drains (stream-server.ts).
const STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-store',
  'x-accel-buffering': 'no',
} as const;

export const streamPrices: StreamHandler<'streamPrices'> = async ({ headers }, { prices, key, head, requestId }) => {
  const topics = parseTopics(headers.Topics);
  const filter = filterFromHeader(headers.Filter);
  const lastEventId = headers['Last-Event-ID'] === undefined ? null : Number(headers['Last-Event-ID']);
  return { status: 200, headers: { ...STREAM_HEADERS }, body: await prices.open({ key, topics, filter, lastEventId, head, requestId }) };
};
