import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { generateMonitorSecret } from '../../src/monitors/monitor.ts';
import { Webhook } from 'standardwebhooks';
import { isPrivateAddress, signWebhook, WebhookSender } from '../../src/monitors/webhook-sender.ts';

describe('WebhookSender', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  /** A receiver that holds every request `holdMs` before answering 204; counts requests at once. */
  async function receiver(holdMs = 0): Promise<{ url: string; port: number; received: () => number; mostAtOnce: () => number }> {
    let received = 0;
    let open = 0;
    let most = 0;
    const server = createServer((req, res) => {
      received += 1;
      most = Math.max(most, (open += 1));
      req.resume();
      setTimeout(() => {
        open -= 1;
        res.writeHead(204).end();
      }, holdMs);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/hook`, port, received: () => received, mostAtOnce: () => most };
  }

  const attempt = (url: string) => ({ url, secret: generateMonitorSecret(), messageId: 'msg_test', body: '{"type":"price.changed"}', at: Date.now() });

  it("signs exactly as the standardwebhooks package does, and the package verifies what it sent", async () => {
    for (const body of ['{"type":"price.changed"}', '{"title":"Été – 😀 naïve","price":1e-7}', '', 'x'.repeat(70_000)]) {
      const secret = generateMonitorSecret();
      const at = 1_765_000_123_456;
      expect(signWebhook(secret, 'msg_2abc', at, body)).toBe(new Webhook(secret).sign('msg_2abc', new Date(at), body));
    }
    let heard: { headers: Record<string, string>; body: string } | undefined;
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
        heard = { headers: req.headers as Record<string, string>, body };
        res.writeHead(204).end();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const sent = { ...attempt(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`), body: '{"type":"price.changed","data":{"title":"Été"}}' };
    expect(await new WebhookSender({ timeoutMs: 1_000, endpointConcurrency: 1, allowPrivateEndpoints: true }).send(sent)).toEqual({ outcome: 'delivered', status: 204 });
    expect(new Webhook(sent.secret).verify(heard!.body, heard!.headers)).toEqual({ type: 'price.changed', data: { title: 'Été' } });
    expect(() => new Webhook(generateMonitorSecret()).verify(heard!.body, heard!.headers)).toThrow('No matching signature found');
  });

  it('refuses loopback and private endpoints, by address or by name, before connecting', async () => {
    const endpoint = await receiver();
    const sender = new WebhookSender({ timeoutMs: 1_000, endpointConcurrency: 1, allowPrivateEndpoints: false });
    for (const url of [endpoint.url, `http://localhost:${endpoint.port}/hook`]) {
      const result = await sender.send(attempt(url));
      expect(result).toMatchObject({ outcome: 'failed', reason: expect.stringContaining('a loopback, private or link-local address; deliveries there are refused') });
    }
    expect(endpoint.received()).toBe(0);
    expect(await new WebhookSender({ timeoutMs: 1_000, endpointConcurrency: 1, allowPrivateEndpoints: true }).send(attempt(endpoint.url))).toEqual({ outcome: 'delivered', status: 204 });
  });

  it.each([
    ['10.1.2.3', true],
    ['172.20.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['fd00::1', true],
    ['fe80::1', true],
    ['8.8.8.8', false],
    ['2001:4860:4860::8888', false],
  ])('counts %s as private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });

  it('fails an attempt that gets no answer in time, and one that is refused, saying which', async () => {
    const slow = await receiver(2_000);
    const sender = new WebhookSender({ timeoutMs: 100, endpointConcurrency: 1, allowPrivateEndpoints: true });
    expect(await sender.send(attempt(slow.url))).toEqual({ outcome: 'failed', reason: 'no answer within 100 ms' });
    const closed = await receiver();
    const server = servers.pop()!;
    await new Promise((resolve) => server.close(resolve));
    expect(await sender.send(attempt(closed.url))).toEqual({ outcome: 'failed', reason: 'connection refused' });
  });

  it('sends at most endpointConcurrency attempts at once to one endpoint', async () => {
    const endpoint = await receiver(50);
    const sender = new WebhookSender({ timeoutMs: 1_000, endpointConcurrency: 2, allowPrivateEndpoints: true });
    const results = await Promise.all(Array.from({ length: 5 }, () => sender.send(attempt(endpoint.url))));
    expect(results.every((result) => result.outcome === 'delivered')).toBe(true);
    expect(endpoint.mostAtOnce()).toBe(2);
  });
});
