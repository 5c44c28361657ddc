// One scenario per webhook × documented receiver answer, against the real server: what the
// receiver answers, and what the service must do then. webhooks-vs-spec.test.ts runs them;
// coverage.test.ts proves every status the contract documents for a webhook has one.
import { webhooks } from '@catalog/contract';

export interface WebhookCase {
  webhook: keyof typeof webhooks;
  /** The receiver's answer to the first attempt (later attempts get 204). */
  status: number;
  headers?: Record<string, string>;
  behaviour: string;
  /** Attempts the receiver gets before the test looks at the monitor. */
  attempts: number;
  /** Whether the monitor is still enabled afterwards. */
  enabled: boolean;
}

export const WEBHOOK_CASES: WebhookCase[] = [
  { webhook: 'priceChanged', status: 200, behaviour: 'a 2xx answer delivers: sent once', attempts: 1, enabled: true },
  { webhook: 'priceChanged', status: 410, behaviour: '410 Gone disables the monitor at once', attempts: 1, enabled: false },
  { webhook: 'priceChanged', status: 429, headers: { 'retry-after': '1' }, behaviour: '429 is retried after Retry-After, with the same webhook-id and body', attempts: 2, enabled: true },
  { webhook: 'priceChanged', status: 503, behaviour: '503 without Retry-After is retried on the schedule', attempts: 2, enabled: true },
  { webhook: 'priceChanged', status: 500, behaviour: 'any other answer is retried on the schedule', attempts: 2, enabled: true },
];

export const webhookCaseKey = (c: Pick<WebhookCase, 'webhook' | 'status'>): string => `webhook ${c.webhook} ${c.status}`;

/** Every webhook × documented status of the contract. */
export const documentedWebhookCases = (): string[] =>
  Object.entries(webhooks).flatMap(([name, webhook]) => webhook.statuses.map((status) => webhookCaseKey({ webhook: name as keyof typeof webhooks, status })));
