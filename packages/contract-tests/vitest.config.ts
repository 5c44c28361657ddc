import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests share the machine's PostgreSQL and Redis; each uses its own database/prefix.
    fileParallelism: true,
  },
});
