// An independent generator must read the contract too: openapi-typescript turns the bundled OpenAPI
// document into types, and those types must compile under strict TypeScript. A spec that only
// hey-api understands (or that hides an invalid schema behind hey-api's leniency) fails here.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { OPENAPI_PATH, REPO_ROOT, operations } from './support/spec.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'contract-openapi-typescript-'));

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('openapi-typescript', () => {
  it('generates types from the bundled document that compile under strict tsc', async () => {
    const bin = join(REPO_ROOT, 'packages/contract-tests/node_modules/.bin/openapi-typescript');
    await run(bin, [OPENAPI_PATH, '--output', join(dir, 'schema.d.ts')]);
    const generated = readFileSync(join(dir, 'schema.d.ts'), 'utf8');
    for (const op of operations) expect(generated).toContain(`${op.operationId}: {`);
    // A consumer of the types: if a schema generated as `never` or `unknown`, these lines stop compiling.
    writeFileSync(
      join(dir, 'use.ts'),
      [
        "import type { components, operations } from './schema.d.ts';",
        "type Free = components['schemas']['CatalogProductFree'];",
        "export const weeklyOrdersIsPro: keyof components['schemas']['CatalogProductPro'] = 'weekly_orders';",
        "export const errorCode: components['schemas']['ErrorBody']['error'] = 'not_found';",
        "export const freeKeys: Array<keyof Free> = ['id', 'slug', 'variants'];",
        "export type Brands = operations['listTopBrands']['responses'][200]['content']['application/json']['data'];",
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          allowImportingTsExtensions: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          // schema.d.ts is checked (skipLibCheck: false); TypeScript's own lib files are not ours.
          skipLibCheck: false,
          skipDefaultLibCheck: true,
          types: [],
        },
        files: ['schema.d.ts', 'use.ts'],
      }),
    );
    const tsc = join(REPO_ROOT, 'node_modules/.bin/tsc');
    const result = await run(tsc, ['-p', join(dir, 'tsconfig.json')]).then(
      () => ({ code: 0, output: '' }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
    );
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, 60_000);
});
