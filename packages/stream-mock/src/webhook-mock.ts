// The price monitors' webhook mocked from the contract: sends the OpenAPI document's
// `priceChanged` examples, signed per Standard Webhooks with a secret of your choice, to a URL, so
// a receiver can be built and its signature check tried before a monitor exists. Each body is
// validated against the webhook's schema before it is sent; each delivery gets a fresh
// `webhook-id` and the current time (envelope `timestamp` and `webhook-timestamp`), as a real
// first attempt does. Nothing is retried: the receiver's answer is reported.
import { randomBytes } from 'node:crypto';
import { createContractAjv } from '@catalog/contract/ajv';
import { openapiDocument } from '@catalog/contract/documents';
import { webhooks } from '@catalog/contract';
import { Webhook } from 'standardwebhooks';

type Json = Record<string, unknown>;

export interface MockDelivery {
  webhookId: string;
  body: string;
  status: number;
}

function follow(document: Json, value: Json): Json {
  const ref = value['$ref'];
  if (typeof ref !== 'string') return value;
  let target: unknown = document;
  for (const segment of ref.slice(2).split('/')) target = (target as Json)[segment];
  return follow(document, target as Json);
}

/** The `priceChanged` examples of the contract, each checked against the webhook's schema. */
export function priceChangedExamples(): Json[] {
  const operation = ((openapiDocument['webhooks'] as Json)['priceChanged'] as Json)[webhooks.priceChanged.method.toLowerCase()] as Json;
  const media = ((operation['requestBody'] as Json)['content'] as Json)['application/json'] as Json;
  const validate = createContractAjv({ allErrors: true }).compile({ ...(media['schema'] as Json), components: openapiDocument['components'] });
  return Object.entries((media['examples'] as Json | undefined) ?? {}).map(([name, example]) => {
    const value = follow(openapiDocument, example as Json)['value'] as Json;
    if (!validate(value)) throw new Error(`the contract's priceChanged example ${name} does not match its schema: ${JSON.stringify(validate.errors)}`);
    return value;
  });
}

export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** POSTs each example, signed with `secret`, to `url`; resolves with what the receiver answered. */
export async function sendExampleWebhooks(url: string, secret: string, fetchImpl: typeof fetch = fetch): Promise<MockDelivery[]> {
  const sent: MockDelivery[] = [];
  for (const example of priceChangedExamples()) {
    const now = new Date();
    const webhookId = `msg_${randomBytes(16).toString('base64url')}`;
    const body = JSON.stringify({ ...example, timestamp: now.toISOString() });
    const response = await fetchImpl(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': webhookId,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(webhookId, now, body),
      },
      body,
    });
    await response.arrayBuffer();
    sent.push({ webhookId, body, status: response.status });
  }
  return sent;
}
