import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { buildPriceChange } from '@catalog/contract/testing';
import { verifyWebhook, WebhookVerificationError } from '../src/index.ts';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const body = JSON.stringify({ type: 'price.changed', timestamp: '2026-11-23T14:03:08.250Z', data: { monitor_id: 'mon_4b1f0c2e9a7d', reset: false, changes: [buildPriceChange()] } });

/** Headers as the service sends them, signed by the `standardwebhooks` package. */
function signed(at = new Date(), id = 'msg_2mXo3pQ8rT1vW4yZ6bC9dF'): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, body) };
}

async function refusal(promise: Promise<unknown>): Promise<WebhookVerificationError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return error as WebhookVerificationError;
}

describe('verifyWebhook', () => {
  it('returns the typed payload of a delivery signed per Standard Webhooks, from a string, bytes or Headers', async () => {
    const headers = signed();
    expect(await verifyWebhook(secret, body, headers)).toEqual(JSON.parse(body));
    expect((await verifyWebhook(secret, new TextEncoder().encode(body), new Headers(headers))).data.changes[0]?.price).toBe(180);
    // node:http gives lowercase names; other frameworks may not.
    expect(await verifyWebhook(secret, body, Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value])))).toBeDefined();
  });

  it('accepts any one of several signatures (a secret being rotated)', async () => {
    const headers = signed();
    headers['webhook-signature'] = `v1,${randomBytes(32).toString('base64')} ${headers['webhook-signature']}`;
    expect(await verifyWebhook(secret, body, headers)).toBeDefined();
  });

  it('refuses a changed body, another secret, and a missing header', async () => {
    expect((await refusal(verifyWebhook(secret, body.replace('180', '18'), signed()))).reason).toBe('bad_signature');
    expect((await refusal(verifyWebhook(`whsec_${randomBytes(32).toString('base64')}`, body, signed()))).reason).toBe('bad_signature');
    const { 'webhook-signature': _dropped, ...unsigned } = signed();
    expect((await refusal(verifyWebhook(secret, body, unsigned))).reason).toBe('missing_headers');
  });

  it('refuses a timestamp more than five minutes from the clock, however well signed', async () => {
    const old = new Date(Date.now() - 301_000);
    expect((await refusal(verifyWebhook(secret, body, signed(old)))).reason).toBe('stale_timestamp');
    expect(await verifyWebhook(secret, body, signed(old), { toleranceSeconds: 600 })).toBeDefined();
  });
});
