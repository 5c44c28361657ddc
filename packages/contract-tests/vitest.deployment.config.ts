import { defineConfig } from 'vitest/config';

// The suite `pnpm contract-test` runs against a deployment (bin/contract-test.ts); not part of `pnpm test`.
export default defineConfig({
  test: {
    include: ['deployment/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
