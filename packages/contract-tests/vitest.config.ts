import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests share the machine's PostgreSQL and Redis; each uses its own database/prefix.
    fileParallelism: true,
    // Most files wait (on child processes, sockets, timers) more than they compute; vitest's default
    // of one worker per core but one would run them one after another on a two-core machine.
    maxWorkers: 3,
  },
});
