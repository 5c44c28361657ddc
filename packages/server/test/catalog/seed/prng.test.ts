import { describe, expect, it } from 'vitest';
import { createRandom } from '../../../src/catalog/seed/prng.ts';

describe('createRandom', () => {
  it('refuses to pick from an empty list, saying so', () => {
    expect(() => createRandom('seed').pick([])).toThrow(new RangeError('pick from an empty list'));
  });
});
