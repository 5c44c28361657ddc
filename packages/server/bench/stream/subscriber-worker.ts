// Stream subscribers in their own process, so the load generator never shares the server's event
// loop. Each subscriber is a raw node:http GET whose chunks stay Buffers (TimestampScanner); on
// sampled subscribers each event's timestamp gives the publish instant. Nothing else is decoded.
// Controlled over IPC: start → connected, reset → reset, count → count (cheap, for polling),
// report → report (with every latency sample), stop → exits.
import { request, type ClientRequest } from 'node:http';
import { decodeTimestamp, wallClockMs } from './price-events.ts';
import { TimestampScanner } from './timestamp-scanner.ts';

export type WorkerCommand =
  | {
      type: 'start';
      url: string;
      headers: Record<string, string>;
      count: number;
      sampleEvery: number;
      concurrency: number;
      /** A header whose value differs per subscriber: subscriber i sends values[i % values.length] (a Filter, say). */
      perSubscriber?: { name: string; values: string[] };
    }
  | { type: 'reset' }
  | { type: 'count' }
  | { type: 'report' }
  | { type: 'stop' };

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'connected'; connected: number; failed: number; statuses: Record<string, number>; ms: number }
  | { type: 'reset' }
  | { type: 'count'; events: number }
  | { type: 'report'; events: number; latencies: number[]; firstAt: number; lastAt: number; closedEarly: number; eventChunks: number };

interface Subscriber {
  sampled: boolean;
  scanner: TimestampScanner;
}

const requests: ClientRequest[] = [];
let events = 0;
let latencies: number[] = [];
let firstAt = 0;
let lastAt = 0;
let closedEarly = 0;
/** Chunks read that held at least one event: about the server's writes of events (TCP may merge or split a few). */
let eventChunks = 0;
let stopping = false;

function onChunk(subscriber: Subscriber, chunk: Buffer): void {
  const now = wallClockMs();
  const before = events;
  subscriber.scanner.scan(chunk, (timestamp) => {
    events++;
    if (firstAt === 0) firstAt = now;
    lastAt = now;
    if (subscriber.sampled) latencies.push(now - decodeTimestamp(timestamp));
  });
  if (events > before) eventChunks++;
}

async function connectAll(command: Extract<WorkerCommand, { type: 'start' }>): Promise<WorkerReply> {
  const started = performance.now();
  const statuses: Record<string, number> = {};
  let connected = 0;
  let failed = 0;
  let next = 0;
  const connectOne = (index: number): Promise<void> =>
    new Promise((resolve) => {
      const subscriber: Subscriber = { sampled: index % command.sampleEvery === 0, scanner: new TimestampScanner() };
      const { perSubscriber } = command;
      const headers = perSubscriber === undefined ? command.headers : { ...command.headers, [perSubscriber.name]: perSubscriber.values[index % perSubscriber.values.length] ?? '' };
      const req = request(command.url, { headers, agent: false }, (res) => {
        const status = String(res.statusCode ?? 0);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (res.statusCode !== 200) {
          failed++;
          res.resume();
          resolve();
          return;
        }
        connected++;
        res.on('data', (chunk: Buffer) => onChunk(subscriber, chunk));
        res.on('close', () => {
          if (!stopping) closedEarly++;
        });
        resolve();
      });
      req.on('error', () => {
        if (!stopping) failed++;
        resolve();
      });
      req.setTimeout(60_000, () => req.destroy(new Error('connect timeout')));
      req.end();
      requests.push(req);
    });
  const lane = async (): Promise<void> => {
    while (next < command.count) await connectOne(next++);
  };
  await Promise.all(Array.from({ length: Math.min(command.concurrency, command.count) }, lane));
  for (const req of requests) req.setTimeout(0);
  return { type: 'connected', connected, failed, statuses, ms: performance.now() - started };
}

const reply = (message: WorkerReply): void => {
  process.send?.(message);
};

process.on('message', (raw) => {
  const command = raw as WorkerCommand;
  switch (command.type) {
    case 'start':
      void connectAll(command).then(reply);
      break;
    case 'reset':
      events = 0;
      eventChunks = 0;
      latencies = [];
      firstAt = 0;
      lastAt = 0;
      reply({ type: 'reset' });
      break;
    case 'count':
      reply({ type: 'count', events });
      break;
    case 'report':
      reply({ type: 'report', events, latencies, firstAt, lastAt, closedEarly, eventChunks });
      break;
    case 'stop':
      stopping = true;
      for (const req of requests) req.destroy();
      process.exit(0);
  }
});
reply({ type: 'ready' });
