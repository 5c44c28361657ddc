// GTIN helpers (GTIN-8/12/13/14 share one mod-10 check digit scheme, weights 3,1 from the right).

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

/** The check digit for a GTIN body (every digit but the check digit). */
export function gtinCheckDigit(body: string): number {
  if (!/^\d+$/u.test(body)) throw new RangeError(`GTIN body must be digits, got "${body}"`);
  let sum = 0;
  for (let i = 0; i < body.length; i += 1) {
    // The digit next to the check digit weighs 3, then weights alternate.
    const digit = body.charCodeAt(body.length - 1 - i) - 48;
    sum += i % 2 === 0 ? digit * 3 : digit;
  }
  return (10 - (sum % 10)) % 10;
}

/** True for 8, 12, 13 or 14 digits whose last digit is the correct check digit. */
export function isValidGtin(gtin: string): boolean {
  if (!/^(?:\d{8}|\d{12,14})$/u.test(gtin)) return false;
  return gtinCheckDigit(gtin.slice(0, -1)) === Number(gtin.slice(-1));
}
