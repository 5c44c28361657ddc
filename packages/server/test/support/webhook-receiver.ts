// A webhook receiver on node:http, port 0: records every delivery (headers and raw body) as it
// arrives and answers each with the next of `answers` (the last one repeats), after `delayMs` (a
// slow endpoint), as a monitor's endpoint would.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedDelivery[];
  /** Resolves once `count` deliveries were received (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
}

export async function startWebhookReceiver(answers: readonly ReceiverAnswer[] = [{ status: 204 }], options: { delayMs?: number } = {}): Promise<WebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = answers[Math.min(received.length - 1, answers.length - 1)]!;
      const respond = (): void => void res.writeHead(answer.status, answer.headers).end();
      if (options.delayMs === undefined) respond();
      else setTimeout(respond, options.delayMs);
      for (const waiter of waiters.splice(0)) waiter();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/prices`,
    received,
    async waitFor(count, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`received ${received.length} deliveries, waited for ${count}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return received.slice(0, count);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
