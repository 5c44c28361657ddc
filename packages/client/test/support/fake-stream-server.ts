// A scriptable stand-in for the stream server: each connection is handed to the test, which
// writes frames, destroys the socket or ends the response as the scenario needs.
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { buildPriceEvent } from '@catalog/contract/testing';
import type { PriceEvent, PriceStreamItem } from '../../src/index.ts';

export interface StreamConnection {
  index: number;
  headers: IncomingHttpHeaders;
  openedAt: number;
  res: ServerResponse;
  /** Resolves when the client or the server closed this connection. */
  closed: Promise<void>;
  /** Sends the stream head (200, text/event-stream) and the given frames. */
  open(...frames: string[]): void;
  /** Sends the stream head and the frames, then ends the response cleanly. */
  openAndEnd(...frames: string[]): void;
  /** Refuses the subscription with an ErrorBody (and any extra headers, e.g. Retry-After). */
  refuse(status: number, error: string, message: string, headers?: Record<string, string>): void;
}

export interface FakeStreamServer {
  url: string;
  connections: StreamConnection[];
  close(): Promise<void>;
}

/**
 * The shared builder's price event on one fixed variant, so an event a test sends and the one it
 * expects, built alike, compare equal.
 */
export function fixedPriceEvent(overrides: Partial<PriceEvent> = {}): PriceEvent {
  return buildPriceEvent({ variant_id: '9b2d4c1e-8a7f-4e3d-b5c6-1f2e3d4c5b6a', ...overrides });
}

export function priceFrame(id: number, topic = 'price:marketplacea:us', event: PriceEvent = fixedPriceEvent({ price: id })): string {
  return `id: ${id}\nevent: ${topic}\ndata: ${JSON.stringify(event)}\n\n`;
}

export async function startFakeStreamServer(onConnect: (connection: StreamConnection) => void, port = 0): Promise<FakeStreamServer> {
  const connections: StreamConnection[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
    const connection: StreamConnection = {
      index: connections.length,
      headers: req.headers,
      openedAt: Date.now(),
      res,
      closed,
      open: (...frames) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', 'X-Request-Id': `stream-${connections.length}` });
        res.flushHeaders();
        for (const frame of frames) res.write(frame);
      },
      openAndEnd: (...frames) => {
        connection.open(...frames);
        res.end();
      },
      refuse: (status, error, message, headers = {}) => {
        res.writeHead(status, { 'Content-Type': 'application/json', 'X-Request-Id': `refused-${status}`, ...headers });
        res.end(JSON.stringify({ status: 'error', error, message, query: {}, data: null, meta: null }));
      },
    };
    connections.push(connection);
    onConnect(connection);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Polls until `condition` holds; fails the test after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Reads items until `count` arrived (then leaves the loop) or the stream ends. */
export async function take(iterable: AsyncIterable<PriceStreamItem>, count: number, onItem?: (items: PriceStreamItem[]) => void): Promise<PriceStreamItem[]> {
  const items: PriceStreamItem[] = [];
  for await (const item of iterable) {
    items.push(item);
    onItem?.(items);
    if (items.length >= count) break;
  }
  return items;
}
