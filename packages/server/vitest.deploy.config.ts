import { defineConfig } from 'vitest/config';

// The production bundle's test alone (`pnpm --filter @catalog/server test:deploy`, part of `pnpm test`).
export default defineConfig({
  test: {
    include: ['test/deploy.integration.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 300_000,
  },
});
