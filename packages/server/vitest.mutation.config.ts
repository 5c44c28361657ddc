import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.ts';

// The tests Stryker runs against each mutant (`pnpm test:mutation`): every test that exercises the
// code in this process. Tests whose subject runs in another process or thread (the CLI, the deployed
// bundle, the stream thread, scale-out across processes) cannot see Stryker's active mutant, so they
// could only pass and would add minutes to each run; they are left to `pnpm test`. scripts/mutation.ts
// sets FC_RUNS low: the property suites re-run for every mutant they reach.
export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [
        'test/cli/**',
        'test/deploy.integration.test.ts',
        'test/scale-out.integration.test.ts',
        'test/stream-thread.test.ts',
        'test/hostile/serve.integration.test.ts',
        'test/hostile/hostile-import.test.ts',
        'test/store/postgres-bulk-load.integration.test.ts',
        // The conformance suites run against SQLite as well; on Redis they reach no other domain code.
        'test/prices/redis-price-log.integration.test.ts',
        'test/stream/redis-hubs.integration.test.ts',
      ],
    },
  }),
);
