// One part of the service in a worker thread of its own (the stream listener, the price
// monitors' delivery), so its work does not share the API's event loop or heap. Both sides of the
// protocol are here: startServiceThread() in the parent, serveThread() in the thread's entry.
// - The thread says `ready` (with what the parent needs, e.g. its URL) once started; a failure to
//   start is thrown in the thread, and rejects the start with the thread's error.
// - If it stops without being asked to, `failed` settles with the reason and the service shuts
//   down (a supervisor restarts it).
// - close() asks the thread to stop its work and close its stores, then waits for it to exit; a
//   handle it still holds after EXIT_GRACE_MS does not hold up the shutdown.
// - metrics() is the thread's own registry (metrics.ts) as prom-client's JSON; a thread that does
//   not answer within a second, or has stopped, gives none for that scrape.
import { Worker, type MessagePort, type ResourceLimits } from 'node:worker_threads';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { Logger } from './logger.ts';

type Metrics = MetricObjectWithValues<MetricValue<string>>[];
const EXIT_GRACE_MS = 2000;
const SCRAPE_TIMEOUT_MS = 1000;

/** Parent → thread: the common messages, and the thread's own (`Extra`). */
type ToThread<Extra> = { type: 'close' } | { type: 'metrics'; id: number } | Extra;
/** Thread → parent. */
type FromThread<Ready> = { type: 'ready'; ready: Ready } | { type: 'closed' } | { type: 'metrics'; id: number; metrics: Metrics };

export interface ServiceThread<Ready, Extra> {
  ready: Ready;
  /** Settles with the reason when the thread stops without being asked to. */
  failed: Promise<Error>;
  /** Sends one of the thread's own messages; none once closing. */
  post(message: Extra): void;
  close(): Promise<void>;
  metrics(): Promise<Metrics>;
}

export async function startServiceThread<Ready, Extra extends { type: string } = never>(
  name: string,
  entry: URL,
  workerData: unknown,
  logger: Logger,
  resourceLimits: ResourceLimits = {},
): Promise<ServiceThread<Ready, Extra>> {
  const worker = new Worker(entry, { workerData, resourceLimits, stdout: false, stderr: false });
  let closing = false;
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  const failed = new Promise<Error>((resolve) => {
    let lastError: Error | null = null;
    worker.on('error', (error) => {
      lastError = error;
    });
    void exited.then((code) => {
      if (!closing) resolve(lastError ?? new Error(`the ${name} thread exited with code ${code}`));
    });
  });
  const closed = Promise.withResolvers<void>();
  const scrapes = new Map<number, (metrics: Metrics) => void>();
  let scrapeId = 0;
  const send = (message: ToThread<Extra>): void => worker.postMessage(message);
  const ready = await new Promise<Ready>((resolve, reject) => {
    worker.on('message', (message: FromThread<Ready>) => {
      if (message.type === 'ready') resolve(message.ready);
      else if (message.type === 'metrics') {
        scrapes.get(message.id)?.(message.metrics);
        scrapes.delete(message.id);
      } else closed.resolve();
    });
    void failed.then(reject);
  });
  void failed.then((error) => logger.error(`${name} thread stopped`, { error }));
  return {
    ready,
    failed,
    post: (message) => {
      if (!closing) send(message);
    },
    metrics: () => {
      if (closing) return Promise.resolve([]);
      const id = (scrapeId += 1);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          scrapes.delete(id);
          resolve([]);
        }, SCRAPE_TIMEOUT_MS);
        scrapes.set(id, (metrics) => {
          clearTimeout(timer);
          resolve(metrics);
        });
        send({ type: 'metrics', id });
      });
    },
    close: async () => {
      if (!closing) {
        closing = true;
        send({ type: 'close' });
      }
      await Promise.race([closed.promise, exited]);
      const timer = setTimeout(() => void worker.terminate(), EXIT_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The thread's side, once its work has started: answers scrapes from `registry`, hands its own
 * messages to `onMessage`, and on close runs `close` and lets the thread exit.
 */
export function serveThread<Ready, Extra extends { type: string } = never>(
  port: MessagePort,
  ready: Ready,
  handlers: { registry: { getMetricsAsJSON(): Promise<Metrics> }; close(): Promise<void>; onMessage?(message: Extra): void },
): void {
  const reply = (message: FromThread<Ready>): void => port.postMessage(message);
  port.on('message', (message: ToThread<Extra>) => {
    if (message.type === 'metrics' && 'id' in message) {
      const { id } = message as { id: number };
      void handlers.registry.getMetricsAsJSON().then((metrics) => reply({ type: 'metrics', id, metrics }));
    } else if (message.type === 'close') {
      void handlers.close().then(() => {
        reply({ type: 'closed' });
        port.close();
      });
    } else handlers.onMessage?.(message as Extra);
  });
  reply({ type: 'ready', ready });
}
