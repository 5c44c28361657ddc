// What a consuming team does: pack the client, install the tarball into a project outside the
// workspace (offline, no workspace links), typecheck a consumer against the shipped .d.ts and run it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installPackedClient, packageDir, packedTarballs } from './support/packed-client.ts';

const workspaceRoot = resolve(packageDir, '../..');
// The workspace's TypeScript, linked into the scratch project: the registry is not needed for the check.
const typescriptDir = dirname(createRequire(join(workspaceRoot, 'package.json')).resolve('typescript/package.json'));

const consumerSource = `
import { CatalogApiError, PriceStreamError, createCatalogClient, isCatalogProductPro } from '@catalog/client';
import type { PriceEvent, PriceStreamItem, StorefrontProduct } from '@catalog/client';

const catalog = createCatalogClient({ baseUrl: 'http://127.0.0.1:1', sseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
export async function use(signal: AbortSignal): Promise<number> {
  const { data } = await catalog.getProduct('air-jordan-1-retro-high-og-chicago');
  const orders: number | undefined = isCatalogProductPro(data) ? data.weekly_orders : undefined;
  const variants = await catalog.searchVariants({ gtin: '195866123456' });
  const page = await catalog.listStorefrontProducts({ filters: 'shop_name = "X"', limit: 50 });
  let walked = 0;
  const filters = ((): string | undefined => undefined)();
  for await (const p of catalog.allStorefrontProducts({ filters })) {
    const product: StorefrontProduct = p;
    walked += product.cursor > 0 ? 1 : 0;
  }
  const brands = await catalog.listTopBrands();
  const { count } = await catalog.countGtins();
  for await (const ev of catalog.priceStream({ topics: ['price:marketplacea:us'], lastEventId: 1, signal, onLastEventId: (id: number) => void id })) {
    // As the issue writes it: the fields read without narrowing first.
    const seen: number[] = [ev.id];
    console.log(seen, ev.topic.length, ev.data);
    const item: PriceStreamItem = ev;
    if (ev.type === 'price') {
      const event: PriceEvent = ev.data;
      walked += ev.id + event.price + ev.topic.length;
    } else {
      walked += item.type.length + ev.oldestId - ev.requestedId;
    }
  }
  return (orders ?? 0) + variants.meta.total + page.meta.total_pages + walked + brands.data.length + count;
}

try {
  await catalog.countGtins();
} catch (error) {
  // Nothing listens on port 1: a network failure, not an answer.
  console.log(JSON.stringify({ network: error instanceof TypeError, api: error instanceof CatalogApiError, stream: PriceStreamError.name }));
}
`;

// A CommonJS consumer: require() with the types of the CommonJS build.
const commonJsSource = `
import client = require('@catalog/client');
import type { ResetNotice } from '@catalog/client';
const { CatalogApiError, PriceStreamError, createCatalogClient } = client;
const notice: ResetNotice = { requested_id: 1, oldest_id: 2 };
const catalog = createCatalogClient({ baseUrl: 'http://127.0.0.1:1', sseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
catalog.countGtins().catch((error: unknown) => {
  console.log(JSON.stringify({ network: error instanceof TypeError, api: error instanceof CatalogApiError, stream: PriceStreamError.name, notice: notice.oldest_id }));
});
`;

/** The machine's own Node (20 here and on CI), not the workspace's Node 24 that leads PATH in tests. */
const systemNode = execFileSync('sh', ['-c', 'command -v node'], { encoding: 'utf8', env: { PATH: '/usr/local/bin:/usr/bin:/bin' } }).trim();

let scratch: string;
let tarball: string;

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'catalog-client-consumer-'));
  tarball = packedTarballs()[0] as string;
  const project = join(scratch, 'project');
  installPackedClient(project);
  symlinkSync(typescriptDir, join(project, 'node_modules', 'typescript'), 'dir');
  writeFileSync(join(project, 'consumer.ts'), consumerSource);
  writeFileSync(join(project, 'consumer-cjs.cts'), commonJsSource);
}, 120_000);

afterAll(() => {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

describe('the packed client', () => {
  it('ships only dist (ESM and CommonJS), the README, the changelog, the licence and the examples, with eventsource-parser its one runtime dependency', () => {
    const files = run('tar', ['-tzf', tarball], scratch).trim().split('\n').sort();
    expect(files).toContain('package/dist/index.js');
    expect(files).toContain('package/dist/index.d.ts');
    expect(files).toContain('package/README.md');
    expect(files).toContain('package/examples/watch-prices.ts');
    expect(files).toContain('package/dist/cjs/index.js');
    expect(files).toContain('package/dist/cjs/index.d.ts');
    // CHANGELOG.md exists once a release has written it (pnpm release).
    expect(files.filter((f) => !/^package\/(dist\/.*\.(js|d\.ts)|dist\/cjs\/package\.json|README\.md|CHANGELOG\.md|LICENSE|package\.json|examples\/[a-z-]+\.ts)$/.test(f))).toEqual([]);
    const manifest = JSON.parse(run('tar', ['-xzOf', tarball, 'package/package.json'], scratch)) as Record<string, unknown>;
    expect(Object.keys(manifest['dependencies'] as object)).toEqual(['eventsource-parser']);
    expect(JSON.stringify(manifest)).not.toContain('workspace:');
  });

  it('typechecks a consumer outside the workspace under strict nodenext settings, including its own .d.ts', () => {
    const project = join(scratch, 'project');
    // skipLibCheck: false checks every declaration file the consumer reaches (the package's own and
    // its dependencies'); skipDefaultLibCheck spares TypeScript's lib.*.d.ts, which are not ours.
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2024', module: 'nodenext', moduleResolution: 'nodenext', strict: true,
          exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, skipLibCheck: false, skipDefaultLibCheck: true,
          noEmit: true, lib: ['es2024', 'dom'], types: [],
        },
        files: ['consumer.ts'],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(typescriptDir, 'bin/tsc'), '-p', '.'], { cwd: project, encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });

  it('typechecks a CommonJS consumer against the CommonJS build\'s declarations', () => {
    const project = join(scratch, 'project');
    writeFileSync(
      join(project, 'tsconfig.cjs.json'),
      JSON.stringify({
        compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, skipLibCheck: false, skipDefaultLibCheck: true, noEmit: true, lib: ['es2022', 'dom'], types: [] },
        files: ['consumer-cjs.cts'],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(typescriptDir, 'bin/tsc'), '-p', 'tsconfig.cjs.json'], { cwd: project, encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });

  it.each([
    ['the system Node', () => systemNode],
    ['Node 24', () => process.execPath],
  ])('loads with require() and with import on %s', (_name, node) => {
    const project = join(scratch, 'project');
    const transpiled = run(process.execPath, ['--input-type=module', '-e', `
      import ts from 'typescript';
      import { readFileSync } from 'node:fs';
      process.stdout.write(ts.transpileModule(readFileSync('consumer-cjs.cts', 'utf8'), { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText);
    `], project);
    writeFileSync(join(project, 'consumer.cjs'), transpiled);
    const required = JSON.parse(run(node(), ['consumer.cjs'], project).trim()) as Record<string, unknown>;
    expect(required).toEqual({ network: true, api: false, stream: 'PriceStreamError', notice: 2 });
    writeFileSync(join(project, 'consumer.mjs'), "import { createCatalogClient, PriceStreamError } from '@catalog/client';\nconsole.log(typeof createCatalogClient, PriceStreamError.name);\n");
    expect(run(node(), ['consumer.mjs'], project).trim()).toBe('function PriceStreamError');
    expect(run(node(), ['--version'], project)).toMatch(/^v(2[0-9])\./);
  });

  it('imports and runs in plain Node without the workspace', () => {
    const project = join(scratch, 'project');
    const output = run(process.execPath, ['consumer.ts'], project);
    expect(JSON.parse(output.trim())).toEqual({ network: true, api: false, stream: 'PriceStreamError' });
  });
});
