import { describe, expect, it } from 'vitest';
import { encodeComment, encodeEvent, encodeReset, encodeRetry } from '../../src/stream/frames.ts';

describe('frames', () => {
  it('encodes retry as its own frame', () => {
    expect(encodeRetry(2000)).toBe('retry: 2000\n\n');
  });

  it('encodes a price event as id, event and one data line', () => {
    const data = '{"source":"marketplacea","price":189.90,"timestamp":"2026-11-23T14:03:07.123456789Z"}';
    expect(encodeEvent({ id: 4212, event: 'price:marketplacea:us', data })).toBe(
      `id: 4212\nevent: price:marketplacea:us\ndata: ${data}\n\n`,
    );
  });

  it('splits data on LF, CRLF and CR into several data lines', () => {
    expect(encodeEvent({ id: 1, event: 'e', data: 'a\nb\r\nc\rd' })).toBe('id: 1\nevent: e\ndata: a\ndata: b\ndata: c\ndata: d\n\n');
  });

  it('keeps empty lines of data, including a trailing line break', () => {
    expect(encodeEvent({ id: 2, event: 'e', data: 'a\n\nb\n' })).toBe('id: 2\nevent: e\ndata: a\ndata: \ndata: b\ndata: \n\n');
  });

  it('passes non-ASCII text through untouched, byte for byte in UTF-8', () => {
    const data = '{"sku":"Ünïcödé ✓ 日本 👟"}';
    const frame = encodeEvent({ id: 3, event: 'price:marketplaceb:jp', data });
    expect(Buffer.from(frame, 'utf8')).toEqual(
      Buffer.concat([Buffer.from('id: 3\nevent: price:marketplaceb:jp\ndata: '), Buffer.from(data, 'utf8'), Buffer.from('\n\n')]),
    );
  });

  it('cannot be made to forge fields through a line break in the event name', () => {
    expect(encodeEvent({ id: 4, event: 'a\r\nid: 99', data: 'x' })).toBe('id: 4\nevent: a  id: 99\ndata: x\n\n');
  });

  it('encodes a comment per line, ended by a blank line so frame-based readers see it', () => {
    expect(encodeComment('heartbeat')).toBe(': heartbeat\n\n');
    expect(encodeComment('a\nb')).toBe(': a\n: b\n\n');
  });

  it('encodes the reset notice without an id', () => {
    expect(encodeReset({ requested_id: 1200, oldest_id: 7001 })).toBe('event: reset\ndata: {"requested_id":1200,"oldest_id":7001}\n\n');
  });
});
