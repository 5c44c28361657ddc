// The price stream's rules that the server and the stream mock (packages/stream-mock) both follow,
// defined once: the frame encoder, the Topics rule, the Last-Event-ID pattern, and the figures the
// AsyncAPI document states in prose (the retry delays, the heartbeat interval, the retained events).
export { encodeComment, encodeEvent, encodeReset, encodeRetry } from './stream/frames.ts';
export { EVENT_TYPES, isTopicsRefusal, MAX_TOPICS, MAX_TOPICS_HEADER_LENGTH, readTopics, SOURCES, type TopicsRefusal } from './stream/topics.ts';
export { LAST_EVENT_ID_PATTERN } from './stream/stream-contract.ts';

/** `retry:` of a stream's opening frame (AsyncAPI: "On connect: `retry: 2000`"). */
export const OPENING_RETRY_MS = 2000;
/** `retry:` of a stream ended because the price log is down or lost its data (AsyncAPI: `retry: 5000`). */
export const UNAVAILABLE_RETRY_MS = 5000;
/** The heartbeat comment's interval when none is configured (AsyncAPI: "Every 15 seconds"). */
export const HEARTBEAT_MS = 15_000;
/** Events the price log retains for resuming, all topics together (AsyncAPI: "The last 5,000 events"). */
export const RETAINED_EVENTS = 5000;
