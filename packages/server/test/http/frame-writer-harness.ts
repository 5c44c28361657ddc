// What the one writer's tests (event-stream-writer.test.ts, stream/readiness.test.ts) drive it
// with: bodies fed by the test, a real server on port 0 whose one response writeFrames writes, and
// a response whose writes reach "the kernel" only when the test says so.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { writeFrames, type WriteFramesOptions } from '../../src/http/event-stream-writer.ts';
import { createLogger } from '../../src/logger.ts';
import type { StreamBody } from '../../src/stream/readiness.ts';

/** A plain body fed by the test: push() frames, an Error to fail it, null to end it; counts pulls and records whether it was returned. */
export function controlledBody() {
  const queued: (string | Error | null)[] = [];
  let wake: (() => void) | null = null;
  const state = { returned: false, pulls: 0 };
  const body: StreamBody & { push(item: string | Error | null): void; state: typeof state } = {
    state,
    push(item: string | Error | null) {
      queued.push(item);
      wake?.();
    },
    [Symbol.asyncIterator]() {
      return {
        next: async (): Promise<IteratorResult<string>> => {
          state.pulls += 1;
          while (queued.length === 0 && !state.returned) await new Promise<void>((resolve) => (wake = resolve));
          const item = state.returned ? null : queued.shift();
          if (item === null || item === undefined) return { done: true, value: undefined };
          if (item instanceof Error) throw item;
          return { done: false, value: item };
        },
        return: async () => {
          state.returned = true;
          wake?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
  return body;
}

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server whose one response is written by writeFrames over `body`; resolves with the URL, the warnings and the writer's outcome. */
export async function serveBody(body: StreamBody, options: Partial<WriteFramesOptions> = {}) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: 'warn', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const written = Promise.withResolvers<'resolved' | 'rejected'>();
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' }).flushHeaders();
    writeFrames(res, body, { ...WRITING, log, ...options }).then(
      () => written.resolve('resolved'),
      () => written.resolve('rejected'),
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, lines, written: written.promise };
}

export const WRITING: WriteFramesOptions = {
  heartbeatMs: 60_000,
  heartbeatFrame: ': heartbeat\n\n',
  maxBufferBytes: 1024 * 1024,
  kernelQueues: { bytes: () => 0 },
  log: createLogger({ level: 'error' }),
};

/**
 * A response whose writes reach "the kernel" only when the test says so (their callbacks run on
 * release()); `writableLength` counts the bytes of writes not yet released.
 */
export function slowResponse() {
  const waiting: { bytes: number; callback: () => void }[] = [];
  const written: string[] = [];
  class SlowResponse extends EventEmitter {
    socket = null;
    destroyed = false;
    get writableLength(): number {
      return waiting.reduce((sum, write) => sum + write.bytes, 0);
    }
    write(chunk: string | Buffer, callback?: () => void): boolean {
      written.push(String(chunk));
      if (callback !== undefined) waiting.push({ bytes: Buffer.byteLength(chunk), callback });
      return true;
    }
    end(): void {
      written.push('<end>');
    }
    destroy(): void {
      this.destroyed = true;
      this.emit('close');
    }
  }
  const res = new SlowResponse();
  const release = (): void => {
    for (const write of waiting.splice(0)) write.callback();
  };
  return { res, written, release };
}

/** Lets `count` turns of the event loop pass. */
export async function turns(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}
