// The limit for the stream: a bare node:http SSE broadcaster. NDJSON price events arrive on stdin
// (one per line, as `prices publish -` takes them); each gets the next id and is written, as the
// same `id:`/`event:`/`data:` frame the server sends, to every subscriber whose `Topics` header
// names its topic. Frames that arrive in one turn of the event loop (one stdin chunk) go out in one
// write per subscriber, as a server draining its price log in batches would: under load the pipe
// fills and batches grow, which is what keeps a fan-out from drowning in per-event syscalls.
// No auth, no log, no replay, no backpressure policy.
// Run as a child process; sends `{ port }` over IPC once listening; stops on SIGTERM.
import { createServer, type ServerResponse } from 'node:http';
import { createInterface } from 'node:readline';
import { listenForParent } from '../lib/processes.ts';

const subscribers = new Map<ServerResponse, Set<string>>();
let nextId = 1;

const server = createServer((req, res) => {
  if (req.url !== '/v1/stream') {
    res.writeHead(404).end();
    return;
  }
  const topics = new Set(String(req.headers['topics'] ?? '').split(',').map((t) => t.trim()).filter((t) => t !== ''));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
  res.write('retry: 2000\n\n');
  subscribers.set(res, topics);
  res.on('close', () => subscribers.delete(res));
});

let pending: { topic: string; frame: string }[] = [];

function flush(): void {
  const frames = pending;
  pending = [];
  const byTopic = new Map<string, string>();
  for (const { topic, frame } of frames) byTopic.set(topic, (byTopic.get(topic) ?? '') + frame);
  for (const [res, topics] of subscribers) {
    if (topics.size === 1) {
      const [only] = topics;
      const text = only === undefined ? undefined : byTopic.get(only);
      if (text !== undefined) res.write(text);
      continue;
    }
    // Several topics: keep the global id order across them.
    const text = frames.filter((f) => topics.has(f.topic)).map((f) => f.frame).join('');
    if (text !== '') res.write(text);
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === '') return;
  const event = JSON.parse(line) as { source: string; market: string };
  const topic = `price:${event.source}:${event.market.toLowerCase()}`;
  if (pending.length === 0) setImmediate(flush);
  pending.push({ topic, frame: `id: ${nextId++}\nevent: ${topic}\ndata: ${line}\n\n` });
});

listenForParent(server);
