// The real server's webhook deliveries against the contract (issue 51): a `catalog serve` with a
// short retry schedule and private endpoints allowed (the receivers run on 127.0.0.1), one
// monitor per case of webhook-cases.ts, each POSTing to a node:http receiver on port 0 that gives
// the case's answer first. Every delivery received is validated against the webhook's schema and
// verified with the client's verifyWebhook; listMonitors then shows what the answer did.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '@catalog/client';
import { webhooks } from '@catalog/contract';
import { buildPriceEvent } from '@catalog/contract/testing';
import { createAjv } from './support/spec.ts';
import { cli, createKey, publishPrices, serve, type RunningServer, type Workspace, workspace } from './support/server.ts';
import { WEBHOOK_CASES, webhookCaseKey, type WebhookCase } from './webhook-cases.ts';

interface Receiver {
  server: Server;
  url: string;
  received: { headers: IncomingHttpHeaders; body: string; at: number }[];
}

async function startReceiver(c: WebhookCase): Promise<Receiver> {
  const received: Receiver['received'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body, at: Date.now() });
      if (received.length === 1) res.writeHead(c.status, c.headers).end();
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

const validatePayload = (() => {
  const ajv = createAjv();
  const schema = (name: keyof typeof webhooks) => ({ $ref: `https://contract.test/openapi.json#/webhooks/${name}/${webhooks[name].method.toLowerCase()}/requestBody/content/application~1json/schema` });
  return (name: keyof typeof webhooks, payload: unknown) => {
    const validate = ajv.compile(schema(name));
    expect(validate(payload), JSON.stringify(validate.errors)).toBe(true);
  };
})();

describe('the real server delivers webhooks as the contract says', () => {
  let ws: Workspace;
  let server: RunningServer;
  let proKey: string;
  const monitors = new Map<string, { receiver: Receiver; secret: string; id: string; product: string }>();

  beforeAll(async () => {
    ws = workspace('webhooks');
    const db = `sqlite:${join(ws.dir, 'catalog.db')}`;
    proKey = await createKey(db, 'pro');
    // One `monitors add` per case, run side by side (each is a process start).
    await Promise.all(
      WEBHOOK_CASES.map(async (c) => {
        const receiver = await startReceiver(c);
        const product = `product-${c.status}`;
        const { stdout } = await cli(['monitors', 'add', '--db', db, '--key', proKey, '--url', receiver.url, '--allow-http', '--filter', `product_id = "${product}"`, '--min-change-percent', '0']);
        const [id, secret] = stdout.trim().split('\n') as [string, string];
        monitors.set(webhookCaseKey(c), { receiver, secret, id, product });
      }),
    );
    server = await serve(db, ['--monitor-private-endpoints', 'allow', '--monitor-retry-schedule', '0s,200ms,200ms']);
    await publishPrices(db, ws.file('prices.ndjson', [...monitors.values()].map(({ product }) => JSON.stringify(buildPriceEvent({ product_id: product }))).join('\n')));
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    for (const { receiver } of monitors.values()) receiver.server.close();
    ws?.dispose();
  });

  describe.each(WEBHOOK_CASES)('$webhook answered $status', (c) => {
    it(c.behaviour, async () => {
      const { receiver, secret, id, product } = monitors.get(webhookCaseKey(c))!;
      const deadline = Date.now() + 10_000;
      while (receiver.received.length < c.attempts && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.received).toHaveLength(c.attempts);
      for (const delivery of receiver.received) {
        const payload = await verifyWebhook(secret, delivery.body, delivery.headers);
        validatePayload(c.webhook, payload);
        expect(payload.data).toMatchObject({ monitor_id: id, changes: [expect.objectContaining({ product_id: product, previous_price: null })] });
      }
      expect(new Set(receiver.received.map((delivery) => delivery.headers['webhook-id'])).size).toBe(1);
      expect(new Set(receiver.received.map((delivery) => delivery.body)).size).toBe(1);
      if (c.headers?.['retry-after'] !== undefined) {
        // Retry-After is honoured, capped at the schedule's longest delay (200 ms here).
        expect(receiver.received[1]!.at - receiver.received[0]!.at).toBeGreaterThanOrEqual(150);
      }
      const listed = await fetch(`${server.apiUrl}/v2/monitors`, { headers: { Authorization: proKey } });
      const mine = ((await listed.json()) as { data: { id: string; enabled: boolean; disabled_reason: string | null }[] }).data.find((monitor) => monitor.id === id);
      expect(mine).toMatchObject({ enabled: c.enabled });
      if (!c.enabled) expect(mine?.disabled_reason).toContain('410');
    });
  });
});
