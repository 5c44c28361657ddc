import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { eventFrame, LiveFrames } from '../../src/http/live-frames.ts';

/** A socket that records what is written to it. */
function recordingSocket(): Socket & { writes: Buffer[] } {
  const writes: Buffer[] = [];
  return { writes, destroyed: false, write: (chunk: Buffer) => writes.push(chunk) > 0 } as unknown as Socket & { writes: Buffer[] };
}

/** A LiveFrames with one attached recording socket, counting the afterWrite calls. */
function attachedSocket() {
  const live = new LiveFrames();
  const socket = recordingSocket();
  let afterWrites = 0;
  const target = live.attach(socket, () => afterWrites++);
  return { socket, target, afterWrites: () => afterWrites };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Decodes HTTP/1.1 chunks back into their payloads, checking each size line. */
function dechunk(bytes: Buffer): string[] {
  const payloads: string[] = [];
  let at = 0;
  while (at < bytes.length) {
    const lineEnd = bytes.indexOf('\r\n', at);
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    const start = lineEnd + 2;
    payloads.push(bytes.subarray(start, start + size).toString('utf8'));
    expect(bytes.subarray(start + size, start + size + 2).toString('latin1')).toBe('\r\n');
    at = start + size + 2;
  }
  return payloads;
}

describe('LiveFrames', () => {
  const a1 = eventFrame('id: 1\nevent: a\ndata: {"price":"9 €"}\n\n');
  const b2 = eventFrame('id: 2\nevent: b\ndata: {}\n\n');
  const a3 = eventFrame('id: 3\nevent: a\ndata: {}\n\n');

  it('sends each subscriber the frames of one turn as one chunk in one write, sized in bytes', async () => {
    const { socket, target } = attachedSocket();
    target.write(a1);
    target.write(b2);
    expect(socket.writes).toHaveLength(0);
    await nextTurn();
    expect(socket.writes).toHaveLength(1);
    expect(dechunk(socket.writes[0] as Buffer)).toEqual([a1.text + b2.text]);
  });

  it('builds one chunk for every subscriber that gets the same frames, and another for a different run', async () => {
    const live = new LiveFrames();
    const [both1, both2, onlyA] = [recordingSocket(), recordingSocket(), recordingSocket()];
    const targets = { both1: live.attach(both1, () => {}), both2: live.attach(both2, () => {}), onlyA: live.attach(onlyA, () => {}) };
    for (const frame of [a1, b2, a3]) {
      targets.both1.write(frame);
      targets.both2.write(frame);
      if (frame !== b2) targets.onlyA.write(frame);
    }
    await nextTurn();
    expect(both1.writes[0]).toBe(both2.writes[0]);
    expect(dechunk(both1.writes[0] as Buffer)).toEqual([a1.text + b2.text + a3.text]);
    expect(dechunk(onlyA.writes[0] as Buffer)).toEqual([a1.text + a3.text]);
  });

  it('starts afresh each turn', async () => {
    const { socket, target } = attachedSocket();
    target.write(a1);
    await nextTurn();
    target.write(a3);
    await nextTurn();
    expect(socket.writes.map((bytes) => dechunk(bytes))).toEqual([[a1.text], [a3.text]]);
  });

  it('flush() writes what waits at once, so the response can end after it', async () => {
    const { socket, target, afterWrites } = attachedSocket();
    target.write(a1);
    target.flush();
    expect(socket.writes.map((bytes) => dechunk(bytes))).toEqual([[a1.text]]);
    expect(afterWrites()).toBe(1);
    target.flush();
    await nextTurn();
    expect(socket.writes).toHaveLength(1);
  });

  it('writes nothing to a destroyed socket', async () => {
    const { socket, target, afterWrites } = attachedSocket();
    target.write(a1);
    (socket as { destroyed: boolean }).destroyed = true;
    await nextTurn();
    expect(socket.writes).toHaveLength(0);
    expect(afterWrites()).toBe(0);
  });
});
