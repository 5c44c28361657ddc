import { describe, expect, it } from 'vitest';
import { comparableGtin, gtinCheckDigit, isValidGtin, normalizeGtin14 } from '../../src/catalog/gtin.ts';

describe('gtin', () => {
  it('computes check digits of GTIN-8, 12, 13 and 14', () => {
    expect(gtinCheckDigit('1234567')).toBe(0); // 12345670
    expect(gtinCheckDigit('03600029145')).toBe(2); // UPC-A 036000291452
    expect(gtinCheckDigit('400638133393')).toBe(1); // EAN-13 4006381333931
    expect(gtinCheckDigit('0400638133393')).toBe(1); // GTIN-14 04006381333931
  });

  it('validates length and check digit', () => {
    expect(isValidGtin('4006381333931')).toBe(true);
    expect(isValidGtin('04006381333931')).toBe(true);
    expect(isValidGtin('036000291452')).toBe(true);
    expect(isValidGtin('4006381333932')).toBe(false);
    expect(isValidGtin('400638133393')).toBe(false);
    expect(isValidGtin('40063813339x1')).toBe(false);
  });

  it('normalises to 14 digits and refuses non-digits or longer input', () => {
    expect(normalizeGtin14('195866123456')).toBe('00195866123456');
    expect(normalizeGtin14('00195866123456')).toBe('00195866123456');
    expect(normalizeGtin14('123456789012345')).toBeUndefined();
    expect(normalizeGtin14('12a')).toBeUndefined();
    expect(() => gtinCheckDigit('')).toThrow(RangeError);
  });

  it('compares GTINs of up to 14 digits in their 14-digit form and keeps anything else as given', () => {
    expect(comparableGtin('12345670')).toBe('00000012345670');
    expect(comparableGtin('04006381333931')).toBe('04006381333931');
    expect(comparableGtin('123456789012345')).toBe('123456789012345');
    expect(comparableGtin('ABC-123')).toBe('ABC-123');
  });

  it('accepts exactly 8, 12, 13 or 14 digits, the whole string, with the right check digit', () => {
    const withCheck = (body: string): string => `${body}${gtinCheckDigit(body)}`;
    for (const body of ['1234567', '03600029145', '400638133393', '0400638133393']) expect(isValidGtin(withCheck(body)), body).toBe(true);
    // Right check digit, wrong length: 1, 9 and 11 digits; and a valid GTIN-8 inside a longer string.
    for (const gtin of ['0', withCheck('12345678'), withCheck('1234567890'), `x${withCheck('1234567')}`]) expect(isValidGtin(gtin), gtin).toBe(false);
  });
});
