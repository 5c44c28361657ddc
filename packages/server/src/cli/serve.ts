// `catalog serve`: the API listener and the stream listener, until SIGTERM.
import { createServiceLogger } from '../logger.ts';
import { loadConfig } from './command-line.ts';
import { startTracing } from '../tracing.ts';

export async function run(args: string[]): Promise<number> {
  const config = loadConfig(args);
  const logger = createServiceLogger(config.logLevel);
  // Before main.ts loads express, pg and ioredis: the instrumentations patch them as they load.
  const tracing = await startTracing({ enabled: config.tracing, logger });
  try {
    const { runUntilSignal, startService } = await import('../main.ts');
    const service = await startService(config, logger);
    await runUntilSignal(service, logger);
  } finally {
    await tracing.shutdown();
  }
  return 0;
}
