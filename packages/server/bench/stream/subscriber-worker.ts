// Stream subscribers in their own process, so the load generator never shares the server's event
// loop. Each subscriber is a raw node:http GET; chunks stay Buffers and are scanned for the
// `"timestamp":"` marker only: every hit is one event, and on sampled subscribers the 30 bytes
// after it give the publish instant. Nothing else of the payload is decoded.
// Controlled over IPC: start → connected, reset → reset, report → report, stop → exits.
import { request, type ClientRequest } from 'node:http';
import { decodeTimestamp, wallClockMs } from './price-events.ts';

export type WorkerCommand =
  | { type: 'start'; url: string; headers: Record<string, string>; count: number; sampleEvery: number; concurrency: number }
  | { type: 'reset' }
  | { type: 'report' }
  | { type: 'stop' };

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'connected'; connected: number; failed: number; statuses: Record<string, number>; ms: number }
  | { type: 'reset' }
  | { type: 'report'; events: number; latencies: number[]; firstAt: number; lastAt: number; closedEarly: number };

const MARKER = Buffer.from('"timestamp":"');
const TIMESTAMP_LENGTH = 30;

interface Subscriber {
  sampled: boolean;
  rest: Buffer | null;
}

const requests: ClientRequest[] = [];
let events = 0;
let latencies: number[] = [];
let firstAt = 0;
let lastAt = 0;
let closedEarly = 0;
let stopping = false;

function onChunk(subscriber: Subscriber, chunk: Buffer): void {
  const buffer = subscriber.rest === null ? chunk : Buffer.concat([subscriber.rest, chunk]);
  subscriber.rest = null;
  const now = wallClockMs();
  let position = 0;
  for (;;) {
    const at = buffer.indexOf(MARKER, position);
    if (at === -1) {
      // A marker may straddle two chunks: keep the bytes that could start it.
      const keepFrom = Math.max(position, buffer.length - MARKER.length + 1);
      if (keepFrom < buffer.length) subscriber.rest = Buffer.from(buffer.subarray(keepFrom));
      return;
    }
    const end = at + MARKER.length + TIMESTAMP_LENGTH;
    if (end > buffer.length) {
      subscriber.rest = Buffer.from(buffer.subarray(at));
      return;
    }
    events++;
    if (firstAt === 0) firstAt = now;
    lastAt = now;
    if (subscriber.sampled) latencies.push(now - decodeTimestamp(buffer.toString('latin1', at + MARKER.length, end)));
    position = end;
  }
}

async function connectAll(command: Extract<WorkerCommand, { type: 'start' }>): Promise<WorkerReply> {
  const started = performance.now();
  const statuses: Record<string, number> = {};
  let connected = 0;
  let failed = 0;
  let next = 0;
  const connectOne = (index: number): Promise<void> =>
    new Promise((resolve) => {
      const subscriber: Subscriber = { sampled: index % command.sampleEvery === 0, rest: null };
      const req = request(command.url, { headers: command.headers, agent: false }, (res) => {
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
      latencies = [];
      firstAt = 0;
      lastAt = 0;
      reply({ type: 'reset' });
      break;
    case 'report':
      reply({ type: 'report', events, latencies, firstAt, lastAt, closedEarly });
      break;
    case 'stop':
      stopping = true;
      for (const req of requests) req.destroy();
      process.exit(0);
  }
});
reply({ type: 'ready' });
