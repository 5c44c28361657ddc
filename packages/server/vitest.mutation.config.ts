import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

// The tests Stryker runs against each mutant (`pnpm test:mutation`, scripts/mutation.ts): those of the
// target folder and of the modules that drive it in this process, named by scripts/mutation.ts in
// MUTATION_TESTS. Tests whose subject runs in another process or thread (the CLI, the deployed
// bundle, the stream thread, scale-out) cannot see Stryker's active mutant, so they are never among
// them. scripts/mutation.ts also sets FC_RUNS low: the property suites re-run for every mutant they reach.
const tests = process.env['MUTATION_TESTS']?.split(',').filter((glob) => glob !== '');

export default defineConfig({
  test: {
    ...base.test,
    include: tests ?? base.test?.include ?? [],
    // A mutant that makes a test hang fails that test here, within 10 s, before Stryker's timeout
    // restarting the whole runner.
    testTimeout: 10_000,
    hookTimeout: 20_000,
    exclude: ['**/node_modules/**', 'test/cli/**', 'test/deploy.integration.test.ts', 'test/scale-out.integration.test.ts', 'test/stream-thread.test.ts'],
  },
});
