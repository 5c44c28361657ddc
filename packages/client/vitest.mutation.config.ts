import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

// The tests Stryker runs against each mutant (`pnpm test:mutation client`), in its copy of this
// package: the packed-client test runs the built dist/ in other processes, which never see a mutant,
// and watch-products.test.ts imports the server's source by a relative path that the copy does not
// have; both are left to `pnpm test`.
export default defineConfig({ test: { ...base.test, exclude: ['**/node_modules/**', 'test/package.test.ts', 'test/watch-products.test.ts'] } });
