// The reads IndexedCatalogStore keeps for any engine: kept per catalog version, dropped by this
// store's writes and by another process's (the engine's change token), and never kept when the
// read raced a write.
import { describe, expect, it } from 'vitest';
import type { CatalogProductPro, StorefrontProduct } from '../../src/catalog/model.ts';
import { jsonOf, storedJson, type RawJson } from '../../src/catalog/raw-json.ts';
import type { CatalogEngine } from '../../src/store/catalog-store.ts';
import { IndexedCatalogStore } from '../../src/store/indexed-catalog-store.ts';
import { ReadCache } from '../../src/store/read-cache.ts';
import { buildCatalogProduct } from '@catalog/contract/testing';

/** An engine holding one product, counting its reads, with a token another process could move. */
function engineWith(product: CatalogProductPro) {
  const state = { product, reads: 0, token: 't1', gate: undefined as Promise<void> | undefined };
  const engine = {
    changePollMs: 0,
    changeToken: () => state.token,
    catalogVersion: async () => state.token,
    getProductDocument: async (): Promise<RawJson<CatalogProductPro> | null> => {
      state.reads += 1;
      const answer = jsonOf(state.product);
      await state.gate;
      return answer;
    },
    upsertCatalogProducts: async (products: readonly CatalogProductPro[]) => {
      state.product = products[0]!;
      return { inserted: 0, updated: 1 };
    },
  } as unknown as CatalogEngine;
  return { engine, state };
}

describe('cached reads', () => {
  it('answers a repeated look-up from memory until the catalog changes, here or elsewhere', async () => {
    const { engine, state } = engineWith(buildCatalogProduct({ title: 'First' }));
    const store = new IndexedCatalogStore(engine);
    await store.getProductDocument(state.product.id);
    await store.getProductDocument(state.product.id);
    expect(state.reads).toBe(1);
    // Another process wrote: the engine's token moved.
    state.token = 't2';
    state.product = { ...state.product, title: 'Second' };
    expect(JSON.parse((await store.getProductDocument(state.product.id))!).title).toBe('Second');
    expect(state.reads).toBe(2);
    // This store wrote.
    await store.upsertCatalogProducts([{ ...state.product, title: 'Third' }]);
    expect(JSON.parse((await store.getProductDocument(state.product.id))!).title).toBe('Third');
    expect(state.reads).toBe(3);
  });

  it('learns a product’s id from its document once per catalog version, by UUID or slug', async () => {
    const { engine, state } = engineWith(buildCatalogProduct({ title: 'First' }));
    const store = new IndexedCatalogStore(engine);
    expect(await store.productIdOf(state.product.slug)).toBe(state.product.id);
    expect(await store.productIdOf(state.product.slug)).toBe(state.product.id);
    expect(state.reads).toBe(1);
    state.token = 't2';
    state.product = { ...state.product, id: '00000000-0000-4000-8000-000000000002' };
    expect(await store.productIdOf(state.product.slug)).toBe('00000000-0000-4000-8000-000000000002');
    expect(state.reads).toBe(2);
  });

  it('remembers that no product has a UUID or slug until the catalog changes', async () => {
    const { engine, state } = engineWith(buildCatalogProduct());
    engine.getProductDocument = async () => {
      state.reads += 1;
      return null;
    };
    const store = new IndexedCatalogStore(engine);
    expect(await store.productIdOf('nothing-here')).toBeNull();
    expect(await store.productIdOf('nothing-here')).toBeNull();
    expect(state.reads).toBe(1);
    state.token = 't2';
    expect(await store.productIdOf('nothing-here')).toBeNull();
    expect(state.reads).toBe(2);
  });

  it('does not keep an answer read while a write committed', async () => {
    const { engine, state } = engineWith(buildCatalogProduct({ title: 'Old' }));
    const store = new IndexedCatalogStore(engine);
    let open!: () => void;
    state.gate = new Promise((resolve) => (open = resolve));
    const racing = store.getProductDocument(state.product.id);
    await new Promise((resolve) => setImmediate(resolve));
    await store.upsertCatalogProducts([{ ...state.product, title: 'New' }]);
    state.gate = undefined;
    open();
    expect(JSON.parse((await racing)!).title).toBe('Old');
    expect(JSON.parse((await store.getProductDocument(state.product.id))!).title).toBe('New');
  });

  it('keeps the storefront pages read most recently when their budget is full, and no page larger than a sixteenth of it', () => {
    const cache = new ReadCache();
    // Pages are kept as UTF-8: one text of 2 million ASCII characters stands for each (16 fill 32 of 33.5 million bytes).
    const page = storedJson<StorefrontProduct[]>('x'.repeat(2_000_000));
    const keep = (key: string, value = page): void => {
      cache.keepStorefrontPage(key, value, cache.generation);
      cache.keepStorefrontPage(key, value, cache.generation);
    };
    const kept = (key: string): boolean => cache.storefrontPage(key) !== undefined;
    for (let i = 0; i < 16; i += 1) keep(`p${i}`);
    expect(kept('p0')).toBe(true);
    keep('p16');
    // p1 is now the least recently read: it went, p0 (read since) stayed.
    expect([kept('p1'), kept('p0'), kept('p16'), kept('p2')]).toStrictEqual([false, true, true, true]);
    keep('large', storedJson<StorefrontProduct[]>('x'.repeat(2_200_000)));
    expect([kept('large'), kept('p3')]).toStrictEqual([false, true]);
  });
});
