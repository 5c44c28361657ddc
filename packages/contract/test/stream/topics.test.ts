// The Topics header rule, shared by the server and the stream mock (src/stream/topics.ts): what
// it accepts, and each refusal with the topic at fault and the message the 400 body carries.
import { describe, expect, it } from 'vitest';
import { isTopicsRefusal, MAX_TOPICS, MAX_TOPICS_HEADER_LENGTH, readTopics, type TopicsRefusal } from '../../src/stream/topics.ts';

const FORMAT = 'use price:<source>:<market>, e.g. "price:marketplacea:us"';

function topicsOf(header: string): string[] {
  const read = readTopics(header);
  if (isTopicsRefusal(read)) throw new Error(`"${header}" was refused: ${read.message}`);
  return [...read];
}

function refusal(header: string | undefined): TopicsRefusal {
  const read = readTopics(header);
  if (!isTopicsRefusal(read)) throw new Error(`"${header}" was accepted`);
  return read;
}

const markets = (count: number): string =>
  Array.from({ length: count }, (_, i) => `price:marketplacea:${String.fromCharCode(97 + Math.floor(i / 26))}${String.fromCharCode(97 + (i % 26))}`).join(',');

describe('readTopics', () => {
  it('accepts the documented example with spaces around commas', () => {
    expect(topicsOf('price:marketplacea:us, price:marketplacea:uk ,price:marketplaceb:nl')).toEqual(['price:marketplacea:us', 'price:marketplacea:uk', 'price:marketplaceb:nl']);
  });

  it('counts a duplicate once', () => {
    expect(topicsOf('price:marketplacea:us,price:marketplacea:us')).toEqual(['price:marketplacea:us']);
  });

  it(`accepts ${MAX_TOPICS} distinct topics and refuses one more`, () => {
    expect(topicsOf(markets(MAX_TOPICS))).toHaveLength(MAX_TOPICS);
    expect(refusal(markets(MAX_TOPICS + 1))).toEqual({ topic: null, message: 'Too many topics: 65 distinct topics, at most 64 are allowed.' });
  });

  it('counts duplicates once towards the limit', () => {
    expect(topicsOf(`${markets(MAX_TOPICS)},${markets(20)}`)).toHaveLength(MAX_TOPICS);
  });

  it(`refuses a header longer than ${MAX_TOPICS_HEADER_LENGTH} characters, as the contract states`, () => {
    expect(refusal(`${markets(1)}${' '.repeat(MAX_TOPICS_HEADER_LENGTH)}`)).toEqual({
      topic: null,
      message: `The Topics header is ${MAX_TOPICS_HEADER_LENGTH + 21} characters long; at most ${MAX_TOPICS_HEADER_LENGTH} are allowed.`,
    });
    expect(topicsOf(`${markets(1)}${' '.repeat(MAX_TOPICS_HEADER_LENGTH - 21)}`)).toHaveLength(1);
  });

  it.each([
    ['a missing header', undefined, null, `The Topics header is missing; send a comma-separated list of topics (${FORMAT}).`],
    ['an empty header', '  ', null, `The Topics header is empty; send a comma-separated list of topics (${FORMAT}).`],
    ['an empty topic between commas', 'price:marketplacea:us,,price:marketplacea:uk', '', 'Topic 2 of the Topics header is empty; remove the extra comma.'],
    ['a trailing comma', 'price:marketplacea:us,', '', 'Topic 2 of the Topics header is empty; remove the extra comma.'],
    ['an unknown event type', 'stock:marketplacea:us', 'stock:marketplacea:us', 'Invalid topic "stock:marketplacea:us": unknown event type "stock"; the only event type is "price".'],
    ['an unknown source', 'price:marketplacec:us', 'price:marketplacec:us', 'Invalid topic "price:marketplacec:us": unknown source "marketplacec"; sources are marketplacea and marketplaceb.'],
    ['a three-letter market', 'price:marketplacea:usa', 'price:marketplacea:usa', 'Invalid topic "price:marketplacea:usa": market "usa" is not two lowercase letters (an ISO 3166-1 alpha-2 code).'],
    ['a digit market', 'price:marketplacea:u1', 'price:marketplacea:u1', 'Invalid topic "price:marketplacea:u1": market "u1" is not two lowercase letters (an ISO 3166-1 alpha-2 code).'],
    ['uppercase', 'price:marketplacea:US', 'price:marketplacea:US', 'Invalid topic "price:marketplacea:US": topics are all lowercase.'],
    ['the short form without the event type', 'marketplacea:us', 'marketplacea:us', `Invalid topic "marketplacea:us": expected three parts separated by ":"; ${FORMAT}.`],
    ['four parts', 'price:marketplacea:us:x', 'price:marketplacea:us:x', `Invalid topic "price:marketplacea:us:x": expected three parts separated by ":"; ${FORMAT}.`],
  ])('refuses %s, naming the topic', (_case, header, topic, message) => {
    expect(refusal(header)).toEqual({ topic, message });
  });

  it('refuses the first bad topic of several', () => {
    expect(refusal('price:marketplacea:us,price:marketplacea:XX,stock:x:y').topic).toBe('price:marketplacea:XX');
  });
});
