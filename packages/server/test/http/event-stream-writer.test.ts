// The one writer with plain bodies (AsyncIterables without a Readiness): what it writes, when it
// pulls, how it ends. What a body's Readiness changes is tested in test/stream/readiness.test.ts.
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { writeFrames } from '../../src/http/event-stream-writer.ts';
import { createLogger } from '../../src/logger.ts';
import { registry } from '../../src/metrics.ts';
import { READINESS, type StreamBody } from '../../src/stream/readiness.ts';
import { SubscriberOverflow } from '../../src/stream/subscription.ts';
import { controlledBody, serveBody, slowResponse, turns, WRITING } from './frame-writer-harness.ts';
import { openStream } from './sse-client.ts';

describe('writeFrames', () => {
  it('writes each frame as it comes, and ends the response cleanly when the body ends', async () => {
    const body = controlledBody();
    const { url, written } = await serveBody(body);
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
    const { url } = await serveBody(body, { heartbeatMs: 30 });
    const stream = await openStream(url, {});
    expect(await stream.frames(2, 2000)).toEqual([{ comments: ['heartbeat'] }, { comments: ['heartbeat'] }]);
  });

  it('does not ask the kernel about a consumer that keeps up (nothing pending in its socket)', async () => {
    const body = controlledBody();
    const asked = { count: 0 };
    const { url } = await serveBody(body, { heartbeatMs: 20, kernelQueues: { bytes: () => ((asked.count += 1), 0) } });
    const stream = await openStream(url, {});
    expect(await stream.frames(5, 2000)).toHaveLength(5);
    expect(asked.count).toBe(0);
  });

  it('cuts a consumer whose body overflowed upstream, and returns the body', async () => {
    const body = controlledBody();
    const { url, lines, written } = await serveBody(body);
    const stream = await openStream(url, {});
    body.push(new SubscriberOverflow(10));
    expect(await stream.ended()).toBe('aborted');
    expect(await written).toBe('resolved');
    expect(lines.map((line) => line['msg'])).toEqual(['slow subscriber disconnected']);
  });

  it('cuts a consumer once the response holds more than the limit', async () => {
    const body = controlledBody();
    const { res, written, release } = slowResponse();
    const done = writeFrames(res as unknown as ServerResponse, body, { ...WRITING, maxBufferBytes: 20 });
    body.push('id: 1\ndata: a\n\n');
    body.push(`data: ${'x'.repeat(30)}\n\n`);
    await turns();
    release();
    await done;
    expect(res.destroyed).toBe(true);
    expect(body.state.returned).toBe(true);
    expect(written).toHaveLength(2);
  });

  it('destroys the response when the body fails, without rejecting', async () => {
    const body = controlledBody();
    const { url, lines, written } = await serveBody(body);
    const stream = await openStream(url, {});
    body.push('id: 1\ndata: a\n\n');
    body.push(new Error('boom'));
    expect(await stream.ended()).toBe('aborted');
    expect(await written).toBe('resolved');
    expect(lines.map((line) => line['msg'])).toEqual(['stream ended by an error']);
    expect(lines[0]?.['error']).toMatchObject({ message: 'boom' });
  });

  it('returns the body when the client goes away', async () => {
    const body = controlledBody();
    const { url, written } = await serveBody(body);
    const stream = await openStream(url, {});
    stream.close();
    expect(await written).toBe('resolved');
    expect(body.state.returned).toBe(true);
  });

  it('pulls a plain body again only once the previous write is handed to the kernel', async () => {
    const body = controlledBody();
    const { res, written, release } = slowResponse();
    const done = writeFrames(res as unknown as ServerResponse, body, WRITING);
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

  describe('what an operator and the client see at the edges', () => {
    const logged = () => {
      const lines: Record<string, unknown>[] = [];
      return { lines, log: createLogger({ level: 'warn', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }) };
    };
    const cuts = async () => (await registry.getSingleMetric('catalog_stream_slow_consumers_cut_total')!.get()).values[0]?.value ?? 0;
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    /** A plain body that ignores return(): its pending next() never settles once it has nothing more. */
    const stubbornBody = () => {
      const state = { returns: 0 };
      let fail: ((error: Error) => void) | null = null;
      let frame: ((value: string) => void) | null = null;
      const body: StreamBody = {
        [Symbol.asyncIterator]: () => ({
          next: () =>
            new Promise<IteratorResult<string>>((resolve, reject) => {
              fail = reject;
              frame = (value) => resolve({ done: false, value });
            }),
          return: async () => {
            state.returns += 1;
            return { done: true, value: undefined };
          },
        }),
      };
      return { body, state, fail: (error: Error) => fail?.(error), frame: (value: string) => frame?.(value) };
    };

    it('cuts at the heartbeat a consumer whose upstream queue grew while its write waited, naming the request and what was held', async () => {
      const body = controlledBody();
      const readiness = { pendingBytes: 0, signal: new AbortController().signal, whenReadable: () => true, take: () => null };
      Object.assign(body, { [READINESS]: readiness });
      const { res } = slowResponse();
      Object.assign(res, { socket: { cork: () => undefined, uncork: () => undefined } });
      const { lines, log } = logged();
      const before = await cuts();
      const done = writeFrames(res as unknown as ServerResponse, body, { ...WRITING, heartbeatMs: 5, maxBufferBytes: 50, kernelQueues: { bytes: () => 7 }, log, requestId: 'req-1' });
      body.push('x'.repeat(10));
      await turns();
      readiness.pendingBytes = 100;
      await wait(30);
      await done;
      expect(res.destroyed).toBe(true);
      expect(body.state.returned).toBe(true);
      expect(lines).toEqual([expect.objectContaining({ msg: 'slow subscriber disconnected', request_id: 'req-1', buffered_bytes: 110, kernel_bytes: 7 })]);
      expect((await cuts()) - before).toBe(1);
    });

    it('cuts at the write, not waiting for a heartbeat, a consumer whose upstream queue and response buffer hold more than the limit together', async () => {
      const body = controlledBody();
      Object.assign(body, { [READINESS]: { pendingBytes: 100, signal: new AbortController().signal, whenReadable: () => true, take: () => null } });
      const { res } = slowResponse();
      const { lines, log } = logged();
      const done = writeFrames(res as unknown as ServerResponse, body, { ...WRITING, maxBufferBytes: 50, log });
      body.push('x'.repeat(10));
      await turns();
      expect(res.destroyed).toBe(true);
      await done;
      expect(lines).toEqual([expect.objectContaining({ msg: 'slow subscriber disconnected', buffered_bytes: 110, kernel_bytes: 0 })]);
    });

    it('keeps a response not yet on a socket holding exactly the limit, without asking the kernel, and stops the heartbeat at the end', async () => {
      const body = controlledBody();
      const { res, written, release } = slowResponse();
      let asked = 0;
      const done = writeFrames(res as unknown as ServerResponse, body, { ...WRITING, heartbeatMs: 5, maxBufferBytes: 10, kernelQueues: { bytes: () => ((asked += 1), 1_000) } });
      body.push('x'.repeat(10));
      await wait(30);
      expect(res.destroyed).toBe(false);
      expect(asked).toBe(0);
      expect(written.filter((chunk) => chunk === ': heartbeat\n\n').length).toBeGreaterThan(1);
      release();
      body.push(null);
      await done;
      await wait(20);
      expect(written.at(-1)).toBe('<end>');
    });

    it('lets the client go away from a body without return()', async () => {
      const { res } = slowResponse();
      const next = Promise.withResolvers<IteratorResult<string>>();
      const body: StreamBody = { [Symbol.asyncIterator]: () => ({ next: () => next.promise }) };
      const done = writeFrames(res as unknown as ServerResponse, body, WRITING);
      res.destroy();
      next.resolve({ done: true, value: undefined });
      await done;
    });

    it('warns when the body fails to stop once the client has gone', async () => {
      const { res } = slowResponse();
      const { lines, log } = logged();
      const next = Promise.withResolvers<IteratorResult<string>>();
      const body: StreamBody = {
        [Symbol.asyncIterator]: () => ({
          next: () => next.promise,
          return: () => Promise.reject(new Error('cannot stop')),
        }),
      };
      const done = writeFrames(res as unknown as ServerResponse, body, { ...WRITING, log });
      res.destroy();
      next.resolve({ done: true, value: undefined });
      await done;
      await turns();
      expect(lines).toEqual([expect.objectContaining({ msg: 'stream body failed to stop', error: expect.objectContaining({ message: 'cannot stop' }) })]);
    });

    it('says nothing of a body that fails after its client has gone', async () => {
      const { res } = slowResponse();
      const { lines, log } = logged();
      const stubborn = stubbornBody();
      const done = writeFrames(res as unknown as ServerResponse, stubborn.body, { ...WRITING, log });
      res.destroy();
      stubborn.fail(new SubscriberOverflow(10));
      await done;
      expect(lines).toEqual([]);
      expect(stubborn.state.returns).toBe(1);
    });

    it('does not write a frame that arrives once the response is destroyed, returns the body and resolves', async () => {
      const { res, written } = slowResponse();
      // A real response emits 'close' after destroy(), not during it.
      res.destroy = () => {
        res.destroyed = true;
        setImmediate(() => res.emit('close'));
      };
      const stubborn = stubbornBody();
      const done = writeFrames(res as unknown as ServerResponse, stubborn.body, WRITING);
      res.destroy();
      stubborn.frame('id: 1\ndata: late\n\n');
      await turns();
      expect(await Promise.race([done.then(() => 'resolved'), turns().then(() => 'pending')])).toBe('resolved');
      expect(written).toEqual([]);
      expect(stubborn.state.returns).toBe(1);
    });

    it('ends the stream with a warning when the body cannot say whether it is readable', async () => {
      const body = controlledBody();
      const readiness = {
        pendingBytes: 0,
        signal: new AbortController().signal,
        whenReadable: (): boolean => {
          throw new Error('readiness broke');
        },
        take: () => null,
      };
      Object.assign(body, { [READINESS]: readiness });
      const { res, release } = slowResponse();
      const { lines, log } = logged();
      const done = writeFrames(res as unknown as ServerResponse, body, { ...WRITING, log });
      body.push('id: 1\ndata: a\n\n');
      await turns();
      release();
      await done;
      expect(res.destroyed).toBe(true);
      expect(lines).toEqual([expect.objectContaining({ msg: 'stream ended by an error', error: expect.objectContaining({ message: 'readiness broke' }) })]);
    });

    it('ends the stream with a warning when the response refuses a write, and stops the body', async () => {
      const body = controlledBody();
      const { res } = slowResponse();
      res.write = () => {
        throw new Error('write refused');
      };
      const { lines, log } = logged();
      const done = writeFrames(res as unknown as ServerResponse, body, { ...WRITING, log });
      body.push('id: 1\ndata: a\n\n');
      await done;
      expect(res.destroyed).toBe(true);
      expect(lines).toEqual([expect.objectContaining({ msg: 'stream ended by an error', error: expect.objectContaining({ message: 'write refused' }) })]);
      // The subscription behind the body is released (its return()), not left to the hub.
      expect(body.state.returned).toBe(true);
    });
  });
});
