import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

// The tests Stryker runs against each mutant (`pnpm test:mutation client`): the packed-client test
// runs the built dist/ in other processes, which never see a mutant, so it is left to `pnpm test`.
export default defineConfig({ test: { ...base.test, exclude: ['**/node_modules/**', 'test/package.test.ts'] } });
