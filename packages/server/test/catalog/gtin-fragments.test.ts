import { describe, expect, it } from 'vitest';
import {
  countedFragments,
  FragmentDeltas,
  FragmentTally,
  gtinSuffixes,
  isGtinFragment,
  prefixEnd,
  STORED_COUNT_MIN,
  totalFromStored,
} from '../../src/catalog/gtin-fragments.ts';

/** Every stored count FragmentTally takes over `gtins`, as a plain object. */
function tallied(gtins: readonly string[]): Record<string, number> {
  const tally = new FragmentTally();
  tally.addJoined(gtins.join(','));
  return Object.fromEntries(tally.stored());
}

/** The count the header's rule stores for `fragment`: variants whose GTIN holds it. */
function holding(gtins: readonly string[], fragment: string): number {
  return gtins.filter((gtin) => gtin.includes(fragment)).length;
}

describe('gtin-fragments', () => {
  describe('isGtinFragment', () => {
    it.each(['0000', '1234', '00195866123458', '12345678'])('takes %s', (text) => {
      expect(isGtinFragment(text)).toBe(true);
    });

    it.each(['', '123', '123456789012345', '12a4', '１２３４', '1234\n', ' 1234', '-1234'])('refuses %j', (text) => {
      expect(isGtinFragment(text)).toBe(false);
    });
  });

  describe('totalFromStored', () => {
    it('uses a stored count for fragments up to 6 digits', () => {
      expect(totalFromStored('1234', 7)).toBe(7);
      expect(totalFromStored('123456', 900)).toBe(900);
    });

    it('reads a missing count of a 4- or 5-digit fragment as no match, of a 6-digit one as unknown', () => {
      expect(totalFromStored('1234', undefined)).toBe(0);
      expect(totalFromStored('12345', undefined)).toBe(0);
      expect(totalFromStored('123456', undefined)).toBeUndefined();
    });

    it('leaves longer fragments to the engine, whatever is stored', () => {
      expect(totalFromStored('1234567', 3)).toBeUndefined();
    });
  });

  describe('gtinSuffixes', () => {
    it('lists every suffix of at least 4 characters, longest first', () => {
      expect(gtinSuffixes('1234567')).toStrictEqual(['1234567', '234567', '34567', '4567']);
      expect(gtinSuffixes('1234')).toStrictEqual(['1234']);
      expect(gtinSuffixes('123')).toStrictEqual([]);
    });

    it('gives a suffix starting with the fragment for every GTIN that contains it', () => {
      const gtins = ['4006381333931', '00195866123458', '12121212'];
      for (const gtin of gtins) {
        for (let start = 0; start + 4 <= gtin.length; start += 1) {
          for (let end = start + 4; end <= gtin.length; end += 1) {
            const fragment = gtin.slice(start, end);
            expect(gtinSuffixes(gtin).some((suffix) => suffix.startsWith(fragment)), `${gtin} ${fragment}`).toBe(true);
          }
        }
      }
    });
  });

  describe('prefixEnd', () => {
    it('is above every string starting with the prefix and below the next prefix', () => {
      expect(prefixEnd('1234')).toBe('1235');
      expect(prefixEnd('1239')).toBe('123:');
      for (const inside of ['1234', '12340', '12349999999999']) expect(inside < prefixEnd('1234')).toBe(true);
      expect('1235' >= prefixEnd('1234')).toBe(true);
      expect('1233999' < '1234').toBe(true);
    });
  });

  describe('countedFragments', () => {
    it('holds each 4- to 6-digit fragment once, however often the GTIN repeats it', () => {
      expect([...countedFragments('1212121')].sort()).toStrictEqual(['121212', '12121', '1212', '212121', '21212', '2121'].sort());
    });

    it('holds nothing of a GTIN shorter than 4 digits, nor fragments with other characters', () => {
      expect(countedFragments('123').size).toBe(0);
      expect([...countedFragments('12a4567')].sort()).toStrictEqual(['4567']);
    });
  });

  describe('FragmentDeltas', () => {
    it('nets a variant rewritten with the same GTIN to nothing', () => {
      const deltas = new FragmentDeltas();
      deltas.remove('4006381333931');
      deltas.add('4006381333931');
      expect(deltas.changes()).toStrictEqual({ always: [], ifStored: [] });
    });

    it('returns 4- and 5-digit changes as always kept and 6-digit ones as kept if stored, each in ascending order', () => {
      const deltas = new FragmentDeltas();
      deltas.add('912345');
      deltas.add('123456');
      deltas.remove('912345');
      const { always, ifStored } = deltas.changes();
      expect(always).toStrictEqual([
        ['1234', 1],
        ['12345', 1],
        ['2345', 1],
        ['23456', 1],
        ['3456', 1],
      ]);
      expect(ifStored).toStrictEqual([['123456', 1]]);
    });

    it('forgets everything on clear', () => {
      const deltas = new FragmentDeltas();
      deltas.add('12345678');
      deltas.clear();
      expect(deltas.changes()).toStrictEqual({ always: [], ifStored: [] });
    });
  });

  describe('FragmentTally', () => {
    it('stores the number of GTINs holding each 4- and 5-digit fragment, counting a GTIN once', () => {
      const gtins = ['12121212', '0012120', '4006381333931'];
      const counts = tallied(gtins);
      for (const fragment of ['1212', '2121', '0012', '12120', '1333', '33393']) expect(counts[fragment], fragment).toBe(holding(gtins, fragment));
      expect(counts['9999']).toBeUndefined();
      expect(Object.keys(counts).every((fragment) => fragment.length <= 5)).toBe(true);
    });

    it('stores a 6-digit fragment only from STORED_COUNT_MIN GTINs on', () => {
      const common = Array.from({ length: STORED_COUNT_MIN }, (_, i) => `777777${String(i).padStart(7, '0')}`);
      expect(tallied(common)['777777']).toBe(STORED_COUNT_MIN);
      expect(tallied(common.slice(1))['777777']).toBeUndefined();
    });

    it('counts no fragment holding another character than a digit, as countedFragments', () => {
      // Characters just below '0' and just above '9', a letter, a space and a sign.
      const gtins = ['12/4567', '1234:678', '12a45678', '1-345678', '123 5678', '+0001234'];
      const expected: Record<string, number> = {};
      for (const gtin of gtins) {
        for (const fragment of countedFragments(gtin)) if (fragment.length <= 5) expected[fragment] = (expected[fragment] ?? 0) + 1;
      }
      expect(tallied(gtins)).toStrictEqual(expected);
    });

    it('agrees with FragmentDeltas over the same GTINs', () => {
      const gtins = ['4006381333931', '00195866123458', '12121212', '0000000000000'];
      const deltas = new FragmentDeltas();
      for (const gtin of gtins) deltas.add(gtin);
      expect(Object.fromEntries(deltas.changes().always)).toStrictEqual(tallied(gtins));
    });
  });
});
