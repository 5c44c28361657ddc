// The GS1 check digit, the one rule every GTIN (GTIN-8/12/13/14) shares: mod 10, weights 3,1 from
// the right. Pure and dependency-free, so the server's GTIN helpers and the test builders share it.

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
