// Runs the stream listener in a worker thread of its own (stream-worker.ts; service-thread.ts for
// the start, the failure, close() and the thread's metrics), so the fan-out and the API do not
// share an event loop or a heap:
// - on a machine with two or more cores, thousands of subscribers and the API each get one;
// - the thread's young generation is capped (STREAM_YOUNG_GENERATION_MB). V8 sizes it from the
//   machine's memory and grows it when a burst of connections survives a few scavenges; in a
//   fan-out that churns small objects at a steady rate it then stays that size while events
//   flow, resident memory the connections do not use (bench/README.md, "The stream's memory").
//   The API thread keeps V8's defaults, where large responses need the room.
// The thread opens its own key store and price log connections. close() ends every stream
// cleanly before the thread closes its stores.
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { startServiceThread } from './service-thread.ts';

export const STREAM_YOUNG_GENERATION_MB = 24;

/** The stream thread's own message: from now on every answer, a stream opened now included, says `Connection: close`. */
export type ToStreamThread = { type: 'drain' };
export interface StreamThreadReady {
  url: string;
}

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
  const thread = await startServiceThread<StreamThreadReady, ToStreamThread>('stream', new URL('./stream-worker.ts', import.meta.url), config, logger, {
    maxYoungGenerationSizeMb: STREAM_YOUNG_GENERATION_MB,
  });
  return {
    url: thread.ready.url,
    failed: thread.failed,
    drain: () => thread.post({ type: 'drain' }),
    close: () => thread.close(),
    metrics: () => thread.metrics(),
  };
}
