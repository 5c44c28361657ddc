// The server's side of the Topics rule (the rule itself is tested with it, in
// packages/contract/test/stream/topics.test.ts): a refusal becomes InvalidTopics, the 400
// `invalid_topics` body, with the rule's topic and message.
import { describe, expect, it } from 'vitest';
import { InvalidTopics, parseTopics } from '../../src/stream/topics.ts';

describe('parseTopics', () => {
  it('returns the distinct topics of the header', () => {
    expect([...parseTopics('price:marketplacea:us, price:marketplaceb:nl,price:marketplacea:us')]).toEqual(['price:marketplacea:us', 'price:marketplaceb:nl']);
  });

  it.each([
    [undefined, null, /The Topics header is missing/],
    ['price:marketplacec:us', 'price:marketplacec:us', /unknown source "marketplacec"; sources are marketplacea and marketplaceb\./],
  ])('throws InvalidTopics for %s, naming the topic', (header, topic, message) => {
    let thrown: unknown;
    try {
      parseTopics(header);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidTopics);
    expect(thrown).toMatchObject({ code: 'invalid_topics', topic });
    expect((thrown as InvalidTopics).message).toMatch(message);
  });
});
