// Runs the stream listener in a worker thread of its own (stream-worker.ts), so the fan-out and
// the API do not share an event loop or a heap:
// - on a machine with two or more cores, thousands of subscribers and the API each get one;
// - the thread's young generation is capped (STREAM_YOUNG_GENERATION_MB). V8 sizes it from the
//   machine's memory and grows it when a burst of connections survives a few scavenges; in a
//   fan-out that churns small objects at a steady rate it then stays that size while events
//   flow, resident memory the connections do not use (bench/README.md, "The stream's memory").
//   The API thread keeps V8's defaults, where large responses need the room.
// The thread opens its own key store and price log connections. If it stops unexpectedly,
// `failed` settles and the service shuts down (a supervisor restarts it).
import { Worker } from 'node:worker_threads';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';

export const STREAM_YOUNG_GENERATION_MB = 24;
const EXIT_GRACE_MS = 2000;

export type ToStreamThread = { type: 'drain' } | { type: 'close' } | { type: 'metrics'; id: number };
export type FromStreamThread = { type: 'listening'; url: string } | { type: 'closed' } | { type: 'metrics'; id: number; metrics: MetricObjectWithValues<MetricValue<string>>[] };

export interface StreamThread {
  url: string;
  /** Settles with the reason when the thread stops without being asked to. */
  failed: Promise<Error>;
  /** From now on every answer, a stream opened now included, says `Connection: close`. */
  drain(): void;
  /** Ends every stream cleanly, closes the thread's stores and waits for it to exit. */
  close(): Promise<void>;
  /** The thread's metrics (metrics.ts), as prom-client's JSON; empty once it has stopped. */
  metrics(): Promise<MetricObjectWithValues<MetricValue<string>>[]>;
}

export async function startStreamThread(config: Config, logger: Logger): Promise<StreamThread> {
  const worker = new Worker(new URL('./stream-worker.ts', import.meta.url), {
    workerData: config,
    resourceLimits: { maxYoungGenerationSizeMb: STREAM_YOUNG_GENERATION_MB },
    stdout: false,
    stderr: false,
  });
  let closing = false;
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  const failed = new Promise<Error>((resolve) => {
    let lastError: Error | null = null;
    worker.on('error', (error) => {
      lastError = error;
    });
    void exited.then((code) => {
      if (!closing) resolve(lastError ?? new Error(`the stream thread exited with code ${code}`));
    });
  });
  const closed = Promise.withResolvers<void>();
  const scrapes = new Map<number, (metrics: MetricObjectWithValues<MetricValue<string>>[]) => void>();
  let scrapeId = 0;
  const url = await new Promise<string>((resolve, reject) => {
    worker.on('message', (message: FromStreamThread) => {
      if (message.type === 'listening') resolve(message.url);
      else if (message.type === 'metrics') {
        scrapes.get(message.id)?.(message.metrics);
        scrapes.delete(message.id);
      } else closed.resolve();
    });
    void failed.then(reject);
  });
  void failed.then((error) => logger.error('stream thread stopped', { error }));
  return {
    url,
    failed,
    metrics: () => {
      if (closing) return Promise.resolve([]);
      const id = (scrapeId += 1);
      return new Promise((resolve) => {
        // A thread that does not answer within a second is left out of this scrape.
        const timer = setTimeout(() => {
          scrapes.delete(id);
          resolve([]);
        }, 1_000);
        scrapes.set(id, (metrics) => {
          clearTimeout(timer);
          resolve(metrics);
        });
        worker.postMessage({ type: 'metrics', id } satisfies ToStreamThread);
      });
    },
    drain: () => {
      if (!closing) worker.postMessage({ type: 'drain' } satisfies ToStreamThread);
    },
    close: async () => {
      if (!closing) {
        closing = true;
        worker.postMessage({ type: 'close' } satisfies ToStreamThread);
      }
      await Promise.race([closed.promise, exited]);
      // Closed: the thread exits once its last handle is gone; one still open must not hold up
      // the shutdown.
      const timer = setTimeout(() => void worker.terminate(), EXIT_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
