// Verifies a price monitor's delivery (the contract's `priceChanged` webhook) per Standard Webhooks:
// `webhook-signature` holds one or more `v1,<base64>` signatures, each an HMAC-SHA256 keyed by the
// monitor's `whsec_` secret (base64 after the prefix) of `<webhook-id>.<webhook-timestamp>.<body>`.
// Web Crypto only (no node:crypto, no dependency), so it runs in Node 20+ and in edge runtimes
// alike; hence asynchronous. Verify the raw body exactly as received: a parsed and re-serialised
// body has other bytes. A timestamp more than `toleranceSeconds` (default 300) away from the
// clock is refused, so a captured delivery cannot be replayed later; deduplicate by `webhook-id`.
import type { PriceChangedWebhook } from '@catalog/contract/types';

export type WebhookVerificationReason = 'missing_headers' | 'stale_timestamp' | 'bad_signature' | 'bad_secret' | 'bad_body';

/** The delivery is not to be trusted; `reason` says why (answer it with a 4xx other than 410). */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from the clock, in seconds; default 300. */
  toleranceSeconds?: number;
  /** The clock, in milliseconds since the epoch; default Date.now. */
  now?: () => number;
}

/** Headers as node:http (`req.headers`), Express or fetch (`Headers`) give them. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return typeof value === 'string' ? value : value?.[0];
}

function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Compares two byte strings in time that depends on their length only. */
function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i += 1) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

/**
 * Checks a delivery's signature and timestamp and returns its payload, typed by the contract;
 * throws WebhookVerificationError otherwise. `body` is the raw request body.
 */
export async function verifyWebhook(secret: string, body: string | Uint8Array, headers: WebhookHeaders, options: VerifyWebhookOptions = {}): Promise<PriceChangedWebhook> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    throw new WebhookVerificationError('missing_headers', 'webhook-id, webhook-timestamp and webhook-signature are required');
  }
  const seconds = Number(timestamp);
  const now = (options.now ?? Date.now)() / 1000;
  if (!/^[0-9]+$/.test(timestamp) || Math.abs(now - seconds) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('stale_timestamp', `webhook-timestamp ${timestamp} is not within ${options.toleranceSeconds ?? 300} s of now`);
  }
  let key: Uint8Array<ArrayBuffer>;
  try {
    key = base64ToBytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  } catch {
    throw new WebhookVerificationError('bad_secret', 'the secret is not a whsec_ secret (base64 after the prefix)');
  }
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const hmac = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const expected = new Uint8Array(await crypto.subtle.sign('HMAC', hmac, new TextEncoder().encode(`${id}.${timestamp}.${text}`)));
  const matches = signatures.split(' ').some((signature) => {
    const [version, value] = signature.split(',');
    if (version !== 'v1' || value === undefined) return false;
    try {
      return equalBytes(base64ToBytes(value), expected);
    } catch {
      return false;
    }
  });
  if (!matches) throw new WebhookVerificationError('bad_signature', 'no webhook-signature matches the body and the secret');
  try {
    return JSON.parse(text) as PriceChangedWebhook;
  } catch {
    throw new WebhookVerificationError('bad_body', 'the body is not JSON');
  }
}
