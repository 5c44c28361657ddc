// GTIN helpers. The check digit is the contract's (`@catalog/contract/gtin`), shared with the test builders.
import { gtinCheckDigit } from '@catalog/contract/gtin';

export { gtinCheckDigit };

/** Left-pads a GTIN of up to 14 digits to 14 digits; returns undefined for anything else. */
export function normalizeGtin14(gtin: string): string | undefined {
  if (!/^\d{1,14}$/u.test(gtin)) return undefined;
  return gtin.padStart(14, '0');
}

/**
 * The form GTINs are stored and compared in (distinct count, GTIN-14 look-ups) on every engine:
 * up to 14 digits left-padded to 14, anything else kept as given.
 */
export function comparableGtin(gtin: string): string {
  return normalizeGtin14(gtin) ?? gtin;
}

/** True for 8, 12, 13 or 14 digits whose last digit is the correct check digit. */
export function isValidGtin(gtin: string): boolean {
  if (!/^(?:\d{8}|\d{12,14})$/u.test(gtin)) return false;
  return gtinCheckDigit(gtin.slice(0, -1)) === Number(gtin.slice(-1));
}
