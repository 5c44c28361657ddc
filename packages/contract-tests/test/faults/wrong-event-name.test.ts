// Fault: a frame with the wrong `event:` name (the short `marketplacea:us` form, another topic's
// name, or a misspelt reset). validateFrame, applied to every frame the real stream sends, and the
// byte comparison with the golden transcript must both catch it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normaliseTranscript, parseSse, SPECS_DIR, validateFrame } from '../support/spec.ts';

const goldenText = readFileSync(join(SPECS_DIR, 'streams/replay-basic.sse'), 'utf8');
const resetText = readFileSync(join(SPECS_DIR, 'streams/replay-reset.sse'), 'utf8');

describe('an event with the wrong event name', () => {
  const [first] = parseSse(goldenText).frames;
  if (first === undefined) throw new Error('replay-basic.sse has no frames');

  it('passes when the name is the full topic of its data', () => {
    expect(validateFrame(first)).toEqual([]);
  });

  for (const event of ['marketplacea:us', 'price:marketplacea:uk', 'price:marketplacea:US', 'price', 'priceUpdate', 'price:marketplacec:us']) {
    it(`is reported for "${event}"`, () => {
      expect(validateFrame({ ...first, event }).length).toBeGreaterThan(0);
    });
  }

  it('is reported for a reset frame under another name, or a reset that carries an id', () => {
    const [reset] = parseSse(resetText).frames;
    if (reset === undefined) throw new Error('replay-reset.sse has no frames');
    expect(validateFrame(reset)).toEqual([]);
    expect(validateFrame({ ...reset, event: 'Reset' }).length).toBeGreaterThan(0);
    expect(validateFrame({ ...reset, id: '11' }).length).toBeGreaterThan(0);
  });

  it('makes the transcript differ from the golden file', () => {
    const planted = goldenText.replace('event: price:marketplacea:us', 'event: marketplacea:us');
    expect(planted).not.toBe(goldenText);
    expect(normaliseTranscript(`retry: 2000\n\n${planted}: heartbeat\n\n`)).not.toBe(goldenText);
    expect(normaliseTranscript(`retry: 2000\n\n${goldenText}: heartbeat\n\n`)).toBe(goldenText);
  });
});
