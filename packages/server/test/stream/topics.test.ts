import { describe, expect, it } from 'vitest';
import { InvalidTopics, MAX_TOPICS, MAX_TOPICS_HEADER_LENGTH, parseTopics } from '../../src/stream/topics.ts';

function refusal(header: string | undefined): InvalidTopics {
  try {
    parseTopics(header);
  } catch (error) {
    if (error instanceof InvalidTopics) return error;
    throw error;
  }
  throw new Error(`"${header}" was accepted`);
}

const markets = (count: number): string =>
  Array.from({ length: count }, (_, i) => `price:marketplacea:${String.fromCharCode(97 + Math.floor(i / 26))}${String.fromCharCode(97 + (i % 26))}`).join(',');

describe('parseTopics', () => {
  it('accepts the documented example with spaces around commas', () => {
    expect([...parseTopics('price:marketplacea:us, price:marketplacea:uk ,price:marketplaceb:nl')]).toEqual([
      'price:marketplacea:us',
      'price:marketplacea:uk',
      'price:marketplaceb:nl',
    ]);
  });

  it('counts a duplicate once', () => {
    expect([...parseTopics('price:marketplacea:us,price:marketplacea:us')]).toEqual(['price:marketplacea:us']);
  });

  it(`accepts ${MAX_TOPICS} distinct topics and refuses one more`, () => {
    expect(parseTopics(markets(MAX_TOPICS)).size).toBe(MAX_TOPICS);
    expect(refusal(markets(MAX_TOPICS + 1)).message).toMatch(/Too many topics: 65 .*at most 64/);
  });

  it('counts duplicates once towards the limit', () => {
    expect(parseTopics(`${markets(MAX_TOPICS)},${markets(20)}`).size).toBe(MAX_TOPICS);
  });

  it(`refuses a header longer than ${MAX_TOPICS_HEADER_LENGTH} characters, as the contract states`, () => {
    expect(refusal(`${markets(1)}${' '.repeat(MAX_TOPICS_HEADER_LENGTH)}`)).toMatchObject({
      topic: null,
      message: `The Topics header is ${MAX_TOPICS_HEADER_LENGTH + 21} characters long; at most ${MAX_TOPICS_HEADER_LENGTH} are allowed.`,
    });
    expect(parseTopics(`${markets(1)}${' '.repeat(MAX_TOPICS_HEADER_LENGTH - 21)}`).size).toBe(1);
  });

  it.each([
    ['a missing header', undefined, null, /missing/],
    ['an empty header', '  ', null, /empty/],
    ['an empty topic between commas', 'price:marketplacea:us,,price:marketplacea:uk', '', /Topic 2 .* empty/],
    ['a trailing comma', 'price:marketplacea:us,', '', /Topic 2 .* empty/],
    ['an unknown event type', 'stock:marketplacea:us', 'stock:marketplacea:us', /unknown event type "stock"/],
    ['an unknown source', 'price:marketplacec:us', 'price:marketplacec:us', /unknown source "marketplacec"; sources are marketplacea and marketplaceb\./],
    ['a three-letter market', 'price:marketplacea:usa', 'price:marketplacea:usa', /market "usa" is not two lowercase letters/],
    ['a digit market', 'price:marketplacea:u1', 'price:marketplacea:u1', /market "u1"/],
    ['uppercase', 'price:marketplacea:US', 'price:marketplacea:US', /lowercase/],
    ['the short form without the event type', 'marketplacea:us', 'marketplacea:us', /three parts/],
  ])('refuses %s, naming the topic', (_case, header, topic, message) => {
    const error = refusal(header);
    expect(error.code).toBe('invalid_topics');
    expect(error.topic).toBe(topic);
    expect(error.message).toMatch(message);
    if (topic) expect(error.message).toContain(`"${topic}"`);
  });
});
