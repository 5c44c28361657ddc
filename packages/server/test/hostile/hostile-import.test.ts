// `catalog import` against a hostile file: every bad line is reported as FILE:LINE and skipped,
// every other line is imported, and nothing accepted makes a later read fail.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IMPORT_LIMITS, nestingDepth } from '../../src/cli/ndjson-lines.ts';
import { silentLogger } from '../../src/logger.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { buildCatalogProduct, buildStorefrontProductInput } from '@catalog/contract/testing';
import { readProduct } from '../support/read-product.ts';
import { runCli } from '../cli/run-cli.ts';

describe('catalog import of a hostile file', () => {
  let dir: string;
  let db: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hostile-import-'));
    db = `sqlite:${join(dir, 'catalog.db')}`;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('skips each hostile line with FILE:LINE and imports every good line of the same batch', async () => {
    const good = Array.from({ length: 5 }, () => buildCatalogProduct());
    const deep = (levels: number) => `{"id":"x","nested":${'['.repeat(levels)}${']'.repeat(levels)}}`;
    const huge = JSON.stringify({ ...buildCatalogProduct(), description: 'x'.repeat(IMPORT_LIMITS.lineBytes) });
    const overflow = JSON.stringify(buildCatalogProduct()).replace(/"avg_price":[0-9.]+/u, '"avg_price":1e400');
    const invalidUtf8 = Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const file = join(dir, 'catalog.ndjson');
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(`${JSON.stringify(good[0])}\n`),
        Buffer.from(`${deep(10_000)}\n`),
        Buffer.from(`${JSON.stringify(good[1])}\r\n`),
        Buffer.from(`${deep(1_500)}\n`),
        invalidUtf8,
        Buffer.from(`\n${JSON.stringify(good[2])}\n`),
        Buffer.from(`${huge}\n`),
        Buffer.from(`${overflow}\n`),
        Buffer.from(`${JSON.stringify(good[3])}\n\n${JSON.stringify(good[4])}`),
      ]),
    );

    const result = await runCli(['import', '--db', db, '--kind', 'catalog', file]);

    expect(result.stderr).toContain(`${file}:2: the value nests deeper than ${IMPORT_LIMITS.depth} levels`);
    expect(result.stderr).toContain(`${file}:4: the value nests deeper than ${IMPORT_LIMITS.depth} levels`);
    expect(result.stderr).toContain(`${file}:5: invalid UTF-8 at byte 8 of the line`);
    expect(result.stderr).toContain(`${file}:7: the line is longer than the ${IMPORT_LIMITS.lineBytes}-byte limit`);
    expect(result.stderr).toContain(`${file}:8: /avg_price is a number too large for a double`);
    expect(result.stderr).not.toMatch(/:(1|3|6|9|11): /u);
    expect(result.stderr).not.toContain('Maximum call stack');
    expect(result.stdout).toMatch(/imported 5 catalog products .* 5 bad line/u);
    expect(result.code).toBe(1);

    const stores = await openCatalogStores(db, silentLogger);
    try {
      for (const product of good) expect(await readProduct(stores.catalog, product.id)).toStrictEqual(product);
      const variants = await stores.catalog.searchVariantDocuments({ offset: 0, limit: 100 });
      expect(variants.total).toBe(good.reduce((sum, product) => sum + product.variants.length, 0));
      for (const text of variants.items) expect(() => JSON.parse(text) as unknown).not.toThrow();
    } finally {
      await stores.close();
    }
  });

  it('accepts a byte order mark on line 1 of a storefront file and exits 0', async () => {
    const file = join(dir, 'storefront.ndjson');
    const products = [buildStorefrontProductInput({ title: 'Stüssy 8 Ball Tee 🎱' }), buildStorefrontProductInput()];
    writeFileSync(file, `\uFEFF${products.map((product) => JSON.stringify(product)).join('\n')}\n`);
    const result = await runCli(['import', '--db', db, '--kind', 'storefront', file]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/imported 2 storefront products/u);
    expect(result.code).toBe(0);
  });
});

describe('nestingDepth', () => {
  it('counts arrays and objects outside strings only, in one pass', () => {
    expect(nestingDepth('{"a":[1,{"b":"[[[{{{"}]}')).toBe(3);
    expect(nestingDepth('"\\"[[["')).toBe(0);
    expect(nestingDepth('['.repeat(100_000))).toBe(100_000);
  });
});
