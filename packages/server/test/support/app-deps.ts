// The dependencies every test gives createApp: fakes for each one, any of which a test replaces.
// AppDeps' required fields must all be given here, so a dependency added to src/dependencies.ts
// fails to compile in this file rather than going missing in tests.
import type { AppDeps } from '../../src/dependencies.ts';
import { silentLogger } from '../../src/logger.ts';
import { storedJson } from '../../src/catalog/raw-json.ts';
import type { LatestPrices } from '../../src/prices/price-log.ts';
import { FakeCatalogStore, FakeKeyStore } from './fake-catalog-store.ts';

export function testAppDeps(overrides: Partial<AppDeps> = {}): AppDeps {
  const defaults: AppDeps = {
    catalog: new FakeCatalogStore(),
    // A price log where nothing was ever published; tests of the latest prices give a real one.
    priceLog: { latestPrices: async (): Promise<LatestPrices> => ({ data: storedJson('[]'), position: 0 }) },
    keys: new FakeKeyStore(),
    // No monitors; tests of listMonitors give a real store.
    monitors: { listMonitors: async () => [] },
    logger: silentLogger,
  };
  return { ...defaults, ...overrides };
}
