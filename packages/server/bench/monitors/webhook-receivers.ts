// Healthy webhook receivers for monitors-bench.ts, in a process of their own: node:http servers on
// `--ports` loopback ports (each port is an endpoint of its own for the sender's per-endpoint
// bound), answering every delivery 204 at once. Each change's publish-to-receive latency is read
// from its `timestamp`, which the bench stamps with the publish instant (stream/price-events.ts);
// repeats (a `webhook-id` seen before) and changes out of log order per monitor are counted.
//
// IPC: ready → `{ ports }`; `reset` clears the samples and counters (not the order state);
// `count` → deliveries and changes so far; `report` → every sample and counter.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { decodeTimestamp, wallClockMs } from '../stream/price-events.ts';

export type ReceiverCommand = { type: 'reset' } | { type: 'count' } | { type: 'report' } | { type: 'stop' };
export type ReceiverReply =
  | { type: 'ready'; ports: number[] }
  | { type: 'reset' }
  | { type: 'count'; deliveries: number; changes: number }
  | { type: 'report'; deliveries: number; changes: number; repeats: number; outOfOrder: number; resets: number; unreadable: number; latencies: number[]; sinceFormed: number[] };

interface Delivered {
  /** When the server formed the delivery (ISO, milliseconds). */
  timestamp?: string;
  data?: { monitor_id?: string; reset?: boolean; changes?: { stream_id?: number; timestamp?: string }[] };
}

const { values } = parseArgs({ options: { ports: { type: 'string', default: '8' } } });

let latencies: number[] = [];
/** Per delivery, from its forming (the body's `timestamp`) to its receipt: the sending half of the latency. */
let sinceFormed: number[] = [];
let deliveries = 0;
let changes = 0;
let repeats = 0;
let outOfOrder = 0;
/** Deliveries saying `reset`: the monitor's reader fell behind the log's retention and events were lost to it. */
let resets = 0;
let unreadable = 0;
const seenIds = new Set<string>();
const lastStreamId = new Map<string, number>();

function record(webhookId: string, body: string, receivedAt: number): void {
  deliveries += 1;
  const repeat = seenIds.has(webhookId);
  if (repeat) repeats += 1;
  else seenIds.add(webhookId);
  let parsed: Delivered;
  try {
    parsed = JSON.parse(body) as Delivered;
  } catch {
    unreadable += 1;
    return;
  }
  if (typeof parsed.timestamp === 'string') sinceFormed.push(receivedAt - Date.parse(parsed.timestamp));
  if (parsed.data?.reset === true && !repeat) resets += 1;
  const monitor = parsed.data?.monitor_id ?? '';
  for (const change of parsed.data?.changes ?? []) {
    changes += 1;
    if (typeof change.timestamp === 'string') latencies.push(receivedAt - decodeTimestamp(change.timestamp));
    const id = change.stream_id ?? 0;
    const last = lastStreamId.get(monitor) ?? 0;
    // A repeat may carry changes already seen; a first delivery must not go back in the log.
    if (id <= last && !repeat) outOfOrder += 1;
    if (id > last) lastStreamId.set(monitor, id);
  }
}

function receiver(): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const receivedAt = wallClockMs();
      res.writeHead(204).end();
      record(String(req.headers['webhook-id'] ?? ''), Buffer.concat(chunks).toString('utf8'), receivedAt);
    });
  });
}

const servers = Array.from({ length: Math.max(1, Number(values.ports)) }, receiver);
const ports = await Promise.all(servers.map((server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)))));

process.on('message', (message: ReceiverCommand) => {
  const reply = (answer: ReceiverReply): void => void process.send?.(answer);
  switch (message.type) {
    case 'reset':
      latencies = [];
      sinceFormed = [];
      deliveries = changes = repeats = outOfOrder = resets = unreadable = 0;
      return reply({ type: 'reset' });
    case 'count':
      return reply({ type: 'count', deliveries, changes });
    case 'report':
      return reply({ type: 'report', deliveries, changes, repeats, outOfOrder, resets, unreadable, latencies, sinceFormed });
    case 'stop':
      for (const server of servers) {
        server.closeAllConnections();
        server.close();
      }
      process.disconnect?.();
      return;
  }
});
process.on('SIGTERM', () => process.exit(0));
process.send?.({ type: 'ready', ports } satisfies ReceiverReply);
