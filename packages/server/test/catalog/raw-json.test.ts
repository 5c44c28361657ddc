import { describe, expect, it } from 'vitest';
import { jsonOf, storedJson, storedJsonBytes } from '../../src/catalog/raw-json.ts';

describe('raw JSON', () => {
  it('hands a store\'s text and bytes over as they are, and jsonOf the JSON text of a value', () => {
    const text = '{"id":"sp_1","title":"Dunk"}';
    const bytes = new TextEncoder().encode(text);
    expect(storedJson(text)).toBe(text);
    expect(storedJsonBytes(bytes)).toBe(bytes);
    expect(jsonOf({ id: 'sp_1', title: 'Dunk' })).toBe(text);
  });
});
