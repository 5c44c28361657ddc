// The `Topics` request header, parsed by the contract's one rule (@catalog/contract/stream, which
// the stream mock follows too); a refusal becomes InvalidTopics, the 400 `invalid_topics` body,
// naming the offending topic and the reason.
import { isTopicsRefusal, readTopics } from '@catalog/contract/stream';
import { CatalogError } from '../catalog/errors.ts';

export { EVENT_TYPES, MAX_TOPICS, MAX_TOPICS_HEADER_LENGTH, SOURCES } from '@catalog/contract/stream';

export class InvalidTopics extends CatalogError {
  /** The offending topic as received, or null when the header as a whole is wrong. */
  readonly topic: string | null;
  constructor(topic: string | null, message: string) {
    super('invalid_topics', message);
    this.topic = topic;
  }
}

/** Parses the header into a set of distinct topics; throws InvalidTopics. */
export function parseTopics(header: string | undefined): ReadonlySet<string> {
  const read = readTopics(header);
  if (isTopicsRefusal(read)) throw new InvalidTopics(read.topic, read.message);
  return read;
}
