// `catalog serve`: the API listener and the stream listener, until SIGTERM.
import { loadConfig } from '../config.ts';
import { createServiceLogger } from '../logger.ts';
import { runUntilSignal, startService } from '../main.ts';

export async function run(args: string[]): Promise<number> {
  const config = loadConfig(args);
  const logger = createServiceLogger(config.logLevel);
  const service = await startService(config, logger);
  await runUntilSignal(service, logger);
  return 0;
}
