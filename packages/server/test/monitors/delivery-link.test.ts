// The link between the monitors' reader and sender (monitors/delivery-loop.ts): the write turn is
// held by one writer at a time, over threads too; "formed" and a reader catching up wake the sender.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { DeliveryLink } from '../../src/monitors/delivery-loop.ts';

const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('DeliveryLink', () => {
  it('gives the write turn to one writer at a time, and to every writer in the end', async () => {
    const link = new DeliveryLink();
    let active = 0;
    let most = 0;
    const done: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        link.inTurn(async () => {
          active += 1;
          most = Math.max(most, active);
          await tick(n % 3);
          active -= 1;
          done.push(n);
        }),
      ),
    );
    expect(most).toBe(1);
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, n) => n));
  });

  it('releases the turn when a write throws', async () => {
    const link = new DeliveryLink();
    await expect(link.inTurn(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await expect(link.inTurn(() => Promise.resolve('next'))).resolves.toBe('next');
  });

  it('holds a writer of another thread off while this one writes', async () => {
    const link = new DeliveryLink();
    const released = new Int32Array(new SharedArrayBuffer(4));
    // The other thread takes the turn, says so, holds it 200 ms, marks that it let go, and lets go.
    const source = `
      const { parentPort, workerData } = require('node:worker_threads');
      const cells = new Int32Array(workerData.link);
      const released = new Int32Array(workerData.released);
      while (Atomics.compareExchange(cells, 2, 0, 1) !== 0) Atomics.wait(cells, 2, 1, 10);
      parentPort.postMessage('holding');
      setTimeout(() => { Atomics.store(released, 0, 1); Atomics.store(cells, 2, 0); Atomics.notify(cells, 2, 1); }, 200);
    `;
    const worker = new Worker(source, { eval: true, workerData: { link: link.buffer, released: released.buffer } });
    try {
      await new Promise<void>((resolve) => worker.once('message', () => resolve()));
      const seen = await link.inTurn(async () => Atomics.load(released, 0));
      expect(seen).toBe(1);
    } finally {
      await worker.terminate();
    }
  });

  it('wakes the sender when the reader formed deliveries, and when it caught up after being behind', async () => {
    const link = new DeliveryLink();
    const stop = new AbortController();
    let wakes = 0;
    const watching = link.watch(() => (wakes += 1), stop.signal, 1_000);
    link.formed();
    await tick(20);
    expect(wakes).toBe(1);
    link.setBehind(true);
    expect(link.behind).toBe(true);
    await tick(20);
    expect(wakes).toBe(1);
    link.setBehind(false);
    await tick(20);
    expect(link.behind).toBe(false);
    expect(wakes).toBe(2);
    stop.abort();
    await watching;
  });
});
