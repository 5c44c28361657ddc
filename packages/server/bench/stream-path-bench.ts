// The stream's path alone, in process: hub → subscription → encoded body → the one writer, for
// 1,000 subscribers of one topic, with responses whose writes complete on the next turn (no
// sockets, no client, no publisher process: what `pnpm bench`'s stream rows cannot separate from
// the load of a shared machine). Reports the heap an idle subscriber holds (after a full
// collection) and the CPU per delivered event. Reports, never asserts. Compare two trees by
// running it against each, alternately:
//   node --expose-gc bench/stream-path-bench.ts [server dir, default this package] [events, default 4000]
import { EventEmitter } from 'node:events';

const root = process.argv[2] || new URL('..', import.meta.url).pathname;
const { PriceHub } = await import(`${root}/src/stream/hub.ts`);
const { BatchEncoder } = await import(`${root}/src/stream/batch-encoder.ts`);
const { encodeSubscription } = await import(`${root}/src/stream/encoded-subscription.ts`);
const { writeFrames } = await import(`${root}/src/http/event-stream-writer.ts`);
const { silentLogger } = await import(`${root}/src/logger.ts`);
const TOPIC = 'price:marketplacea:us';
const SUBSCRIBERS = 1000;
const EVENTS = Number(process.argv[3] ?? 3000);
let nextId = 0;
const waiting: ((e: unknown) => void)[] = [];
const queue: unknown[] = [];
const log = {
  readAfter: async () => [],
  bounds: async () => (nextId === 0 ? null : { oldestId: 1, newestId: nextId }),
  async *follow(_after: number, signal: AbortSignal) {
    while (!signal.aborted) {
      if (queue.length === 0) await new Promise((resolve) => waiting.push(resolve));
      while (queue.length > 0) yield queue.shift();
    }
  },
  ping: async () => {},
  append: async () => [],
  close: async () => {},
};
function publish(): void {
  nextId += 1;
  queue.push({ id: nextId, topic: TOPIC, data: `{"source":"marketplacea","market":"US","price":${100 + (nextId % 50)},"id":${nextId}}` });
  for (const wake of waiting.splice(0)) wake(undefined);
}
class FakeResponse extends EventEmitter {
  socket = null;
  destroyed = false;
  writableLength = 0;
  bytes = 0;
  write(chunk: string | Buffer, callback?: () => void): boolean {
    this.bytes += chunk.length;
    if (callback) setImmediate(callback);
    return true;
  }
  end(): void {}
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}
const hub = new PriceHub(log, silentLogger, {});
const encoder = new BatchEncoder();
const responses: FakeResponse[] = [];
globalThis.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
for (let i = 0; i < SUBSCRIBERS; i++) {
  const subscription = await hub.subscribe({ topics: new Set([TOPIC]), lastEventId: null });
  const body = encodeSubscription(subscription, encoder, { opening: 'retry: 2000\n\n', unavailableRetryMs: 5000, log: silentLogger });
  const res = new FakeResponse();
  responses.push(res);
  void writeFrames(res as never, body, { heartbeatMs: 60_000, heartbeatFrame: ': heartbeat\n\n', maxBufferBytes: 1 << 20, kernelQueues: { bytes: () => 0 }, log: silentLogger });
}
const turn = () => new Promise((resolve) => setImmediate(resolve));
// Idle: connected, the opening frame written, no event yet.
for (let t = 0; t < 10; t++) await turn();
globalThis.gc?.();
const idleBytesPerSubscriber = Math.round((process.memoryUsage().heapUsed - heapBefore) / SUBSCRIBERS);
for (let i = 0; i < 50; i++) {
  publish();
  for (let t = 0; t < 4; t++) await turn();
}
const expected = () => responses.reduce((sum, r) => sum + r.bytes, 0);
globalThis.gc?.();
const before = process.cpuUsage();
const startBytes = expected();
const t0 = performance.now();
for (let i = 0; i < EVENTS; i++) {
  publish();
  if (i % 10 === 9) for (let t = 0; t < 4; t++) await turn();
}
for (let t = 0; t < 20; t++) await turn();
const cpu = process.cpuUsage(before);
const ms = performance.now() - t0;
const delivered = EVENTS * SUBSCRIBERS;
console.log(JSON.stringify({ root, idleBytesPerSubscriber, cpuNsPerDelivery: Math.round(((cpu.user + cpu.system) * 1000) / delivered), wallMs: Math.round(ms), bytes: expected() - startBytes, heapMiB: Math.round(process.memoryUsage().heapUsed / 1048576) }));
await hub.stop();
process.exit(0);
