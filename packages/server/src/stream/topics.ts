// The `Topics` request header: comma-separated `price:<source>:<market>` topics, all lowercase,
// spaces around commas allowed, duplicates counted once, at most MAX_TOPICS topics and
// MAX_TOPICS_HEADER_LENGTH characters (the contract's limits, read from it by stream-contract.ts
// where the document states them in a schema). Every refusal names the offending
// topic and the reason, for the 400 `invalid_topics` body.
import { CatalogError } from '../catalog/errors.ts';
import { PRICE_SOURCES, TOPICS_HEADER_MAX_LENGTH } from './stream-contract.ts';

export const MAX_TOPICS = 64;
/** The `Topics` header's `maxLength` in the contract. */
export const MAX_TOPICS_HEADER_LENGTH = TOPICS_HEADER_MAX_LENGTH;
export const EVENT_TYPES = ['price'] as const;
export const SOURCES = PRICE_SOURCES;

export class InvalidTopics extends CatalogError {
  /** The offending topic as received, or null when the header as a whole is wrong. */
  readonly topic: string | null;
  constructor(topic: string | null, message: string) {
    super('invalid_topics', message);
    this.topic = topic;
  }
}

const MARKET = /^[a-z]{2}$/;
const FORMAT = 'use price:<source>:<market>, e.g. "price:marketplacea:us"';

/** Parses the header into a set of distinct topics; throws InvalidTopics. */
export function parseTopics(header: string | undefined): ReadonlySet<string> {
  if (header === undefined) {
    throw new InvalidTopics(null, `The Topics header is missing; send a comma-separated list of topics (${FORMAT}).`);
  }
  if (header.trim() === '') {
    throw new InvalidTopics(null, `The Topics header is empty; send a comma-separated list of topics (${FORMAT}).`);
  }
  if (header.length > MAX_TOPICS_HEADER_LENGTH) {
    throw new InvalidTopics(null, `The Topics header is ${header.length} characters long; at most ${MAX_TOPICS_HEADER_LENGTH} are allowed.`);
  }
  const topics = new Set<string>();
  header.split(',').forEach((raw, index) => {
    const topic = raw.trim();
    checkTopic(topic, index + 1);
    topics.add(topic);
  });
  if (topics.size > MAX_TOPICS) {
    throw new InvalidTopics(null, `Too many topics: ${topics.size} distinct topics, at most ${MAX_TOPICS} are allowed.`);
  }
  return topics;
}

function checkTopic(topic: string, position: number): void {
  const bad = (why: string): InvalidTopics => new InvalidTopics(topic, `Invalid topic "${topic}": ${why}.`);
  if (topic === '') {
    throw new InvalidTopics('', `Topic ${position} of the Topics header is empty; remove the extra comma.`);
  }
  if (topic !== topic.toLowerCase()) throw bad('topics are all lowercase');
  const parts = topic.split(':');
  if (parts.length !== 3) throw bad(`expected three parts separated by ":"; ${FORMAT}`);
  const [type = '', source = '', market = ''] = parts;
  if (!(EVENT_TYPES as readonly string[]).includes(type)) {
    throw bad(`unknown event type "${type}"; the only event type is "price"`);
  }
  if (!(SOURCES as readonly string[]).includes(source)) {
    throw bad(`unknown source "${source}"; sources are ${SOURCES.join(' and ')}`);
  }
  if (!MARKET.test(market)) throw bad(`market "${market}" is not two lowercase letters (an ISO 3166-1 alpha-2 code)`);
}
