import { describe, expect, it } from 'vitest';
import { jsonOf } from '../../src/catalog/raw-json.ts';
import { isSerialized, serialized } from '../../src/http/serialized.ts';

describe('serialized', () => {
  it('makes a body of one piece from whole JSON text, which the exchange sends as it is', () => {
    const json = jsonOf({ status: 'success', data: [] });
    const body = serialized(json);
    expect(body.serializedJson).toEqual(['{"status":"success","data":[]}']);
    expect(isSerialized(body)).toBe(true);
  });
});

describe('isSerialized', () => {
  it.each([null, undefined, 'text', 0, { serializedJson: 'text' }, { status: 'success' }])('tells a body to stringify from %j', (body) => {
    expect(isSerialized(body)).toBe(false);
  });
});
