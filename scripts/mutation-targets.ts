// The targets of `pnpm test:mutation` (scripts/mutation.ts) and of the survivor lists
// (scripts/mutation-survivors.ts): what each mutates, in which package, with which tests.

export interface Target {
  /** The package Stryker runs in. */
  packageDir: string;
  mutate: string[];
  vitestConfig: string;
  /** The test files run against the mutants: the folder's own and those that drive it in-process. */
  tests?: string[];
  /** The score below which the run fails (the goals of issue 27). */
  breakAt: number;
}

export const TARGETS: Record<string, Target> = {
  stream: {
    packageDir: 'packages/server',
    mutate: ['src/stream/**/*.ts'],
    vitestConfig: 'vitest.mutation.config.ts',
    tests: ['test/stream/*.test.ts', 'test/http/event-stream-writer.test.ts', 'test/http/stream-server.test.ts', 'test/prices/sqlite-price-log.test.ts'],
    breakAt: 80,
  },
  catalog: {
    packageDir: 'packages/server',
    mutate: ['src/catalog/**/*.ts'],
    vitestConfig: 'vitest.mutation.config.ts',
    // The catalog's own tests and the snapshot's (which reads and writes the index's columns). The
    // HTTP tests reach most of the catalog too, but run with it they made the target a run of hours
    // on two cores; the score is that of these tests, a lower bound of what the whole suite kills.
    tests: ['test/catalog/**/*.test.ts', 'test/store/storefront-snapshot.test.ts'],
    breakAt: 80,
  },
  http: {
    packageDir: 'packages/server',
    mutate: ['src/http/**/*.ts'],
    vitestConfig: 'vitest.mutation.config.ts',
    tests: ['test/http/*.test.ts', 'test/hostile/bad-input.integration.test.ts', 'test/hostile/listeners.test.ts', 'test/metrics.test.ts'],
    breakAt: 70,
  },
  // The stream rules shared with the client (frames, topics, the stream contract) live in the
  // contract package: a mutant there reaches only that package's own tests, so they are a target
  // of their own. The server's tests of them (test/stream/topics.test.ts) run with the unmutated copy.
  contract: {
    packageDir: 'packages/contract',
    mutate: ['src/stream/**/*.ts'],
    // All of the package's tests (two files); its config reads no MUTATION_TESTS.
    vitestConfig: 'vitest.config.ts',
    breakAt: 80,
  },
  // The client's stream: the resumable price stream and the errors it raises.
  client: { packageDir: 'packages/client', mutate: ['src/price-stream.ts', 'src/errors.ts'], vitestConfig: 'vitest.mutation.config.ts', breakAt: 70 },
};
