// The one writer loop of a streamed body (placeholder until the batch writer lands): frames go out
// through res.write, paced on 'drain'; a heartbeat every `heartbeatMs`; a subscriber holding more
// than `maxBufferBytes` (socket buffer, upstream queue, and the kernel's unsent bytes at
// heartbeats) is cut. Never rejects.
import type { ServerResponse } from 'node:http';
import type { Logger } from '../logger.ts';
import { streamMetrics } from '../metrics.ts';
import type { FrameStream } from '../stream/frame-stream.ts';
import type { KernelSendQueues } from './kernel-send-queue.ts';

export interface FrameWriting {
  heartbeatMs: number;
  heartbeatFrame: string;
  maxBufferBytes: number;
  kernelQueues: Pick<KernelSendQueues, 'bytes'>;
  log: Logger;
}

const WRITE_HIGH_WATER = 64 * 1024;

export async function writeFrames(res: ServerResponse, body: FrameStream, options: FrameWriting): Promise<void> {
  const { maxBufferBytes, log } = options;
  const iterator = body[Symbol.asyncIterator]();
  let cut = false;
  const overflowed = (inKernel: number): void => {
    if (cut) return;
    cut = true;
    streamMetrics.slowConsumerCut();
    log.warn('slow subscriber disconnected', { buffered_bytes: res.writableLength + body.pendingBytes, kernel_bytes: inKernel });
    res.destroy();
    void iterator.return?.();
  };
  const heartbeat = setInterval(() => {
    res.write(options.heartbeatFrame);
    const socket = res.socket;
    const inKernel = socket === null ? 0 : options.kernelQueues.bytes(socket);
    if (res.writableLength + body.pendingBytes + inKernel > maxBufferBytes) overflowed(inKernel);
  }, options.heartbeatMs);
  heartbeat.unref();
  const gone = (): void => void iterator.return?.();
  res.on('close', gone);
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done === true || res.destroyed) break;
      res.write(next.value);
      if (res.writableLength + body.pendingBytes > maxBufferBytes) {
        overflowed(0);
        break;
      }
      if (res.writableLength > WRITE_HIGH_WATER) await drained(res);
    }
    if (!res.destroyed) res.end();
  } catch (error) {
    if (!cut) log.warn('stream ended by an error', { error });
    res.destroy();
  } finally {
    clearInterval(heartbeat);
    res.off('close', gone);
    await iterator.return?.();
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
