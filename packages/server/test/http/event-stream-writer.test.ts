// The one writer with plain bodies (AsyncIterables without a Readiness): what it writes, when it
// pulls, how it ends. What a body's Readiness changes is tested in test/stream/readiness.test.ts.
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { writeFrames } from '../../src/http/event-stream-writer.ts';
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
});
