import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { generateSecret, priceChangedExamples, sendExampleWebhooks } from '../src/webhook-mock.ts';
import { startStreamMock, type StreamMock } from '../src/stream-mock.ts';

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

  describe('POST /_mock/webhooks on the running mock', () => {
    let mock: StreamMock | undefined;
    afterEach(async () => {
      await mock?.close();
      mock = undefined;
    });

    it('sends the signed examples to the given URL and answers with the secret and the statuses', async () => {
      const bodies: { headers: IncomingHttpHeaders; body: string }[] = [];
      const receiver = createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        req.on('end', () => {
          bodies.push({ headers: req.headers, body });
          res.writeHead(200).end();
        });
      });
      servers.push(receiver);
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      mock = await startStreamMock({ port: 0 });
      const response = await fetch(`${mock.url}/_mock/webhooks`, { method: 'POST', body: JSON.stringify({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` }) });
      expect(response.status).toBe(200);
      const answer = (await response.json()) as { secret: string; deliveries: { webhook_id: string; status: number }[] };
      expect(answer.secret).toMatch(/^whsec_/);
      expect(answer.deliveries.map((delivery) => delivery.status)).toEqual(priceChangedExamples().map(() => 200));
      expect(bodies.map((delivery) => delivery.headers['webhook-id'])).toEqual(answer.deliveries.map((delivery) => delivery.webhook_id));
      for (const delivery of bodies) expect(() => new Webhook(answer.secret).verify(delivery.body, delivery.headers as Record<string, string>)).not.toThrow();
    });

    it('refuses a body without an http URL, and says so when the receiver cannot be reached', async () => {
      mock = await startStreamMock({ port: 0 });
      const post = (body: string): Promise<Response> => fetch(`${mock!.url}/_mock/webhooks`, { method: 'POST', body });
      const bad = await post(JSON.stringify({ url: 'ftp://example.com/hook' }));
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ status: 'error', error: 'invalid_request' });
      expect((await post('not json')).status).toBe(400);
      expect((await post(JSON.stringify({ url: 'http://127.0.0.1:9/hook', secret: 'nope' }))).status).toBe(400);
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const unreachable = await post(JSON.stringify({ url: `http://127.0.0.1:${port}/hook` }));
      expect(unreachable.status).toBe(503);
      expect(((await unreachable.json()) as { message: string }).message).toContain('ECONNREFUSED');
      expect((await fetch(`${mock.url}/_mock/webhooks`)).status).toBe(405);
    });
  });
});
