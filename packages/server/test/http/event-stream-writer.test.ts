import { EventEmitter } from 'node:events';
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFrames, type FrameStream, type WriteFramesOptions } from '../../src/http/event-stream-writer.ts';
import { createLogger } from '../../src/logger.ts';
import { SubscriberOverflow } from '../../src/stream/subscription.ts';
import { openStream } from './sse-client.ts';

/** A body fed by the test: push() frames, end() or fail() it; counts pulls and records whether it was returned. */
function controlledBody(pendingBytes = 0) {
  const queued: (string | Error | null)[] = [];
  let wake: (() => void) | null = null;
  const state = { returned: false, pendingBytes, pulls: 0 };
  const body: FrameStream & { push(item: string | Error | null): void; state: typeof state } = {
    state,
    get pendingBytes() {
      return state.pendingBytes;
    },
    push(item) {
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

/** A server whose one response is written by writeFrames over `body`; resolves with the URL and the writer's outcome. */
async function serve(body: FrameStream, options: Partial<WriteFramesOptions> = {}) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: 'warn', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const written = Promise.withResolvers<'resolved' | 'rejected'>();
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' }).flushHeaders();
    writeFrames(res, body, { heartbeatMs: 60_000, heartbeatFrame: ': heartbeat\n\n', maxBufferBytes: 1024 * 1024, kernelQueues: { bytes: () => 0 }, log, ...options }).then(
      () => written.resolve('resolved'),
      () => written.resolve('rejected'),
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, lines, written: written.promise };
}

describe('writeFrames', () => {
  it('writes each frame as it comes, and ends the response cleanly when the body ends', async () => {
    const body = controlledBody();
    const { url, written } = await serve(body);
    const stream = await openStream(url, {});
    body.push('id: 1\ndata: a\n\n');
    expect(await stream.frames(1)).toEqual([{ id: '1', data: 'a', comments: [] }]);
    body.push('id: 2\ndata: b\n\nid: 3\ndata: c\n\n');
    body.push(null);
    expect(await stream.ended()).toBe('end');
    expect(stream.raw()).toBe('id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\n');
    expect(await written).toBe('resolved');
  });

  it('writes the heartbeat frame every heartbeatMs', async () => {
    const body = controlledBody();
    const { url } = await serve(body, { heartbeatMs: 30 });
    const stream = await openStream(url, {});
    expect(await stream.frames(2, 2000)).toEqual([{ comments: ['heartbeat'] }, { comments: ['heartbeat'] }]);
  });

  it('does not ask the kernel about a consumer that keeps up (nothing pending in its socket)', async () => {
    const body = controlledBody();
    const asked = { count: 0 };
    const { url } = await serve(body, { heartbeatMs: 20, kernelQueues: { bytes: () => ((asked.count += 1), 0) } });
    const stream = await openStream(url, {});
    expect(await stream.frames(5, 2000)).toHaveLength(5);
    expect(asked.count).toBe(0);
  });

  it('cuts a consumer once the bytes held for it, upstream included, exceed the limit, and returns the body', async () => {
    const body = controlledBody(2000);
    const { url, lines, written } = await serve(body, { maxBufferBytes: 1000 });
    const stream = await openStream(url, {});
    body.push(': x\n\n');
    expect(await stream.ended()).toBe('aborted');
    expect(await written).toBe('resolved');
    expect(body.state.returned).toBe(true);
    expect(lines).toMatchObject([{ msg: 'slow subscriber disconnected', kernel_bytes: 0 }]);
  });

  it('cuts a consumer whose body overflowed upstream the same way', async () => {
    const body = controlledBody();
    const { url, lines, written } = await serve(body);
    const stream = await openStream(url, {});
    body.push(new SubscriberOverflow(10));
    expect(await stream.ended()).toBe('aborted');
    expect(await written).toBe('resolved');
    expect(lines.map((line) => line['msg'])).toEqual(['slow subscriber disconnected']);
  });

  it('destroys the response when the body fails, without rejecting', async () => {
    const body = controlledBody();
    const { url, lines, written } = await serve(body);
    const stream = await openStream(url, {});
    body.push('id: 1\ndata: a\n\n');
    body.push(new Error('boom'));
    expect(await stream.ended()).toBe('aborted');
    expect(await written).toBe('resolved');
    expect(lines.map((line) => line['msg'])).toEqual(['stream ended by an error']);
  });

  it('returns the body when the client goes away', async () => {
    const body = controlledBody();
    const { url, written } = await serve(body);
    const stream = await openStream(url, {});
    stream.close();
    expect(await written).toBe('resolved');
    expect(body.state.returned).toBe(true);
  });

  it('with whenReadable, pulls only when the body says a pull would not wait, and writes what it then takes', async () => {
    const body = controlledBody();
    let listener: (() => void) | null = null;
    const readableBody: FrameStream = {
      get pendingBytes() {
        return 0;
      },
      whenReadable(onReadable) {
        if (body.state.returned) return true;
        listener = onReadable;
        return false;
      },
      [Symbol.asyncIterator]: () => body[Symbol.asyncIterator](),
    };
    body.push('retry: 1000\n\n');
    const { url, written } = await serve(readableBody);
    const stream = await openStream(url, {});
    await stream.frames(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The opening frame was pulled, and then nothing until the body is readable.
    expect(body.state.pulls).toBe(1);
    expect(listener).not.toBeNull();
    body.push('id: 1\ndata: a\n\n');
    listener!();
    expect(await stream.frames(1)).toEqual([{ id: '1', data: 'a', comments: [] }]);
    expect(body.state.pulls).toBe(2);
    stream.close();
    expect(await written).toBe('resolved');
    expect(body.state.returned).toBe(true);
  });

  describe('one write at a time', () => {
    /**
     * A response whose writes reach "the kernel" only when the test says so (their callbacks
     * run on release()); `writableLength` counts the bytes of writes not yet released.
     */
    function slowResponse() {
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

    const OPTIONS = { heartbeatMs: 60_000, heartbeatFrame: ': heartbeat\n\n', maxBufferBytes: 1024 * 1024, kernelQueues: { bytes: () => 0 }, log: createLogger({ level: 'error' }) };
    const turns = async (count = 5): Promise<void> => {
      for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
    };

    it('pulls again only once the previous write is handed to the kernel', async () => {
      const body = controlledBody();
      const { res, written, release } = slowResponse();
      const done = writeFrames(res as unknown as ServerResponse, body, OPTIONS);
      body.push('id: 1\ndata: a\n\n');
      body.push('id: 2\ndata: b\n\n');
      await turns();
      // The first frame is written and waits for the client: the second is not pulled yet.
      expect(written).toEqual(['id: 1\ndata: a\n\n']);
      expect(body.state.pulls).toBe(1);
      release();
      await turns();
      expect(written).toEqual(['id: 1\ndata: a\n\n', 'id: 2\ndata: b\n\n']);
      expect(body.state.pulls).toBe(2);
      body.push(null);
      release();
      await done;
      expect(written.at(-1)).toBe('<end>');
    });

    it('stops waiting for a write when the body ends meanwhile, and cuts a body that overflowed', async () => {
      const body = controlledBody();
      const ended = new AbortController();
      const withSignal: FrameStream = {
        get pendingBytes() {
          return 0;
        },
        signal: ended.signal,
        [Symbol.asyncIterator]: () => body[Symbol.asyncIterator](),
      };
      const { res, written } = slowResponse();
      const done = writeFrames(res as unknown as ServerResponse, withSignal, OPTIONS);
      body.push('id: 1\ndata: a\n\n');
      await turns();
      expect(written).toEqual(['id: 1\ndata: a\n\n']);
      // The client never reads; the body overflows upstream and ends.
      body.push(new SubscriberOverflow(10));
      ended.abort();
      await done;
      expect(res.destroyed).toBe(true);
      expect(written).toEqual(['id: 1\ndata: a\n\n']);
    });
  });
});
