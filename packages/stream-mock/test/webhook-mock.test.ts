import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { generateSecret, priceChangedExamples, sendExampleWebhooks } from '../src/webhook-mock.ts';

describe('the priceChanged webhook mock', () => {
  const servers: ReturnType<typeof createServer>[] = [];
  afterEach(() => servers.splice(0).forEach((server) => server.close()));

  it("sends each of the contract's examples, signed with the given secret, and reports the receiver's answers", async () => {
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(received.length === 1 ? 204 : 410).end();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const secret = generateSecret();
    const sent = await sendExampleWebhooks(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, secret);
    expect(sent.length).toBe(priceChangedExamples().length);
    expect(sent[0]?.status).toBe(204);
    for (const delivery of received) {
      const payload = new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>) as { type: string; data: { changes: unknown[] } };
      expect(payload.type).toBe('price.changed');
      expect(payload.data.changes.length).toBeGreaterThan(0);
    }
  });
});
