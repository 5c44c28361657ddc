import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests share the machine's PostgreSQL and Redis; each uses its own database/prefix.
    fileParallelism: true,
    // Most files wait (on child processes, sockets, timers) more than they compute: vitest's default
    // (cores - 1) would run them one after another on a two-core machine. Two, not more: the servers
    // and Prism they start need the same cores, and start-up deadlines are 30 s.
    maxWorkers: 2,
  },
});
