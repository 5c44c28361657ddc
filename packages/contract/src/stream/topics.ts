// The `Topics` request header: comma-separated `price:<source>:<market>` topics, all lowercase,
// spaces around commas allowed, duplicates counted once, at most MAX_TOPICS topics and
// MAX_TOPICS_HEADER_LENGTH characters (the contract's limits, read from it by stream-contract.ts
// where the document states them in a schema). The one rule of the server and the stream mock;
// a refusal names the offending topic and the reason, for the 400 `invalid_topics` body.
import { PRICE_SOURCES, TOPICS_HEADER_MAX_LENGTH } from './stream-contract.ts';

export const MAX_TOPICS = 64;
/** The `Topics` header's `maxLength` in the contract. */
export const MAX_TOPICS_HEADER_LENGTH = TOPICS_HEADER_MAX_LENGTH;
export const EVENT_TYPES = ['price'] as const;
export const SOURCES = PRICE_SOURCES;

/** A Topics header the rule refuses: the message for the client, and the topic at fault (null when the header as a whole is wrong). */
export interface TopicsRefusal {
  topic: string | null;
  message: string;
}

const MARKET = /^[a-z]{2}$/;
const FORMAT = 'use price:<source>:<market>, e.g. "price:marketplacea:us"';

/** The distinct topics of the header, or why it is refused. */
export function readTopics(header: string | undefined): ReadonlySet<string> | TopicsRefusal {
  if (header === undefined) {
    return { topic: null, message: `The Topics header is missing; send a comma-separated list of topics (${FORMAT}).` };
  }
  if (header.trim() === '') {
    return { topic: null, message: `The Topics header is empty; send a comma-separated list of topics (${FORMAT}).` };
  }
  if (header.length > MAX_TOPICS_HEADER_LENGTH) {
    return { topic: null, message: `The Topics header is ${header.length} characters long; at most ${MAX_TOPICS_HEADER_LENGTH} are allowed.` };
  }
  const topics = new Set<string>();
  const parts = header.split(',');
  for (const [index, raw] of parts.entries()) {
    const topic = raw.trim();
    const refusal = checkTopic(topic, index + 1);
    if (refusal !== null) return refusal;
    topics.add(topic);
  }
  if (topics.size > MAX_TOPICS) {
    return { topic: null, message: `Too many topics: ${topics.size} distinct topics, at most ${MAX_TOPICS} are allowed.` };
  }
  return topics;
}

export function isTopicsRefusal(read: ReadonlySet<string> | TopicsRefusal): read is TopicsRefusal {
  return !(read instanceof Set);
}

function checkTopic(topic: string, position: number): TopicsRefusal | null {
  const bad = (why: string): TopicsRefusal => ({ topic, message: `Invalid topic "${topic}": ${why}.` });
  if (topic === '') return { topic: '', message: `Topic ${position} of the Topics header is empty; remove the extra comma.` };
  if (topic !== topic.toLowerCase()) return bad('topics are all lowercase');
  const parts = topic.split(':');
  if (parts.length !== 3) return bad(`expected three parts separated by ":"; ${FORMAT}`);
  const [type = '', source = '', market = ''] = parts;
  if (!(EVENT_TYPES as readonly string[]).includes(type)) return bad(`unknown event type "${type}"; the only event type is "price"`);
  if (!(SOURCES as readonly string[]).includes(source)) return bad(`unknown source "${source}"; sources are ${SOURCES.join(' and ')}`);
  if (!MARKET.test(market)) return bad(`market "${market}" is not two lowercase letters (an ISO 3166-1 alpha-2 code)`);
  return null;
}
