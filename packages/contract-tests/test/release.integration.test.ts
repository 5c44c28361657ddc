// The release as other teams receive it: both packages published to a real npm registry (Verdaccio,
// test/support/registry.ts, offline) by the release's own publish step (`node scripts/release.ts publish`,
// `pnpm publish` of the built packages), then installed from that registry into fresh projects
// outside the workspace, one with npm and one with pnpm, and used there: the client imported as an
// ES module and required as CommonJS, a consumer typechecked against the published declarations,
// and an operation and the price stream called on the real server (its CLI, port 0, SQLite).
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG, DUNK_PRICES, toNdjson } from './support/fixtures.ts';
import { startRegistry, type Registry } from './support/registry.ts';
import { packedTarballs } from '../../client/test/support/packed-client.ts';
import { createKey, importProducts, publishPrices, type RunningServer, serve, workspace } from './support/server.ts';
import { REPO_ROOT } from './support/spec.ts';

const execFileAsync = promisify(execFile);
const require = createRequire(import.meta.url);
const typescriptDir = dirname(require.resolve('typescript/package.json'));
const version = (JSON.parse(readFileSync(require.resolve('@catalog/api-documents/package.json'), 'utf8')) as { version: string }).version;
const PACKAGES = ['@catalog/client', '@catalog/api-documents'];
const TOPIC = 'price:marketplacea:us';
/** The prices published on TOPIC, in order (the other event is the UK market's). */
const usPrices = DUNK_PRICES.filter((event) => event.market === 'US').map((event) => event.price);
/** The machine's own Node (20 here and on CI), not the workspace's Node 24 that leads PATH in tests. */
const systemNode = execFileSync('sh', ['-c', 'command -v node'], { encoding: 'utf8', env: { PATH: '/usr/local/bin:/usr/bin:/bin' } }).trim();

const ws = workspace('release');
let registry: Registry | undefined;
let server: RunningServer | undefined;
let proKey: string;
const projects = { npm: join(ws.dir, 'npm-consumer'), pnpm: join(ws.dir, 'pnpm-consumer') };

/** Runs a command; a failure shows its output. `userconfig` replaces the user's .npmrc. */
async function run(command: string, args: string[], cwd: string, userconfig: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, NPM_CONFIG_USERCONFIG: userconfig, npm_config_update_notifier: 'false' },
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: error });
  }
}

async function startServer(): Promise<RunningServer> {
  const db = `sqlite:${join(ws.dir, 'catalog.db')}`;
  await importProducts(db, 'catalog', ws.file('catalog.ndjson', toNdjson(Object.values(CATALOG))));
  proKey = await createKey(db, 'pro');
  await publishPrices(db, ws.file('prices.ndjson', toNdjson(DUNK_PRICES)));
  return serve(db);
}

/** An empty project that depends on exactly the released version of both packages. */
function consumerProject(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const dependencies = Object.fromEntries(PACKAGES.map((name) => [name, version]));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies }));
}

beforeAll(async () => {
  const published = (async () => {
    registry = await startRegistry(join(ws.dir, 'registry'));
    // The client's runtime dependencies, packed from the workspace's installed copies (pack:consumer).
    for (const tarball of packedTarballs().slice(1)) await registry.publishTarball(tarball);
    await run(process.execPath, [join(REPO_ROOT, 'scripts/release.ts'), 'publish', '--registry', registry.url], REPO_ROOT, registry.npmrc);
    return registry;
  })();
  const started = startServer().then((running) => (server = running));
  const { url } = await published;
  // Reading needs no token: the consumers' config names the registry only.
  const readonly = ws.file('consumer.npmrc', `registry=${url}\n`);
  consumerProject(projects.npm);
  consumerProject(projects.pnpm);
  await Promise.all([
    run('npm', ['install', '--registry', url, '--cache', join(ws.dir, 'npm-cache'), '--no-audit', '--no-fund'], projects.npm, readonly),
    run('pnpm', ['install', '--registry', url, '--store-dir', join(ws.dir, 'pnpm-store'), '--cache-dir', join(ws.dir, 'pnpm-cache')], projects.pnpm, readonly),
    started,
  ]);
}, 120_000);

afterAll(async () => {
  await server?.kill();
  await registry?.close();
  ws.dispose();
});

describe('the released packages', () => {
  it('are in the registry at the release version, with no workspace dependency', async () => {
    for (const name of PACKAGES) {
      const response = await fetch(new URL(name.replace('/', '%2f'), registry!.url));
      const packument = (await response.json()) as { 'dist-tags': Record<string, string>; versions: Record<string, { dependencies?: Record<string, string> }> };
      expect(packument['dist-tags']).toEqual({ latest: version });
      expect(Object.keys(packument.versions)).toEqual([version]);
      expect(JSON.stringify(packument.versions[version]?.dependencies ?? {})).not.toContain('workspace:');
    }
  });

  it.each(Object.entries(projects))('install with %s: the client, its one dependency and the four documents', (manager, project) => {
    // Resolved from the client's own folder: pnpm links a dependency's dependencies there only.
    expect(() => createRequire(join(project, 'node_modules/@catalog/client/package.json')).resolve('eventsource-parser/package.json')).not.toThrow();
    for (const file of ['openapi.json', 'openapi.yaml', 'asyncapi.json', 'asyncapi.yaml']) {
      expect(existsSync(join(project, 'node_modules/@catalog/api-documents/dist', file))).toBe(true);
    }
    const lock = readFileSync(join(project, manager === 'npm' ? 'package-lock.json' : 'pnpm-lock.yaml'), 'utf8');
    expect(lock).toContain('@catalog/client');
    expect(lock).not.toContain('registry.npmjs.org/@catalog');
  });

  it('imports as an ES module (npm project, Node 24): an operation and the stream on the running server', async () => {
    writeFileSync(
      join(projects.npm, 'consumer.mjs'),
      `import { createCatalogClient } from '@catalog/client';
import openapi from '@catalog/api-documents/openapi.json' with { type: 'json' };
const [baseUrl, sseUrl, apiKey] = process.argv.slice(2);
const catalog = createCatalogClient({ baseUrl, sseUrl, apiKey });
const { data } = await catalog.getProduct(${JSON.stringify(CATALOG.dunk.slug)});
// The stream from its start: a reset item (the log does not reach back to id 0), then the topic's events.
const controller = new AbortController();
const types = [];
const prices = [];
for await (const item of catalog.priceStream({ topics: [${JSON.stringify(TOPIC)}], lastEventId: 0, signal: controller.signal })) {
  types.push(item.type);
  if (item.type === 'price') prices.push(item.data.price);
  if (prices.length === 2) break;
}
console.log(JSON.stringify({ product: data.id, types, prices, documents: openapi.info.version }));
`,
    );
    const output = await run(process.execPath, ['consumer.mjs', server!.apiUrl, server!.streamUrl, proKey], projects.npm, join(ws.dir, 'consumer.npmrc'));
    expect(JSON.parse(output.trim())).toEqual({ product: CATALOG.dunk.id, types: ['reset', 'price', 'price'], prices: usPrices, documents: version });
  });

  it('requires as CommonJS (pnpm project, the system Node): an operation and the stream on the running server', async () => {
    writeFileSync(
      join(projects.pnpm, 'consumer.cjs'),
      `const { createCatalogClient, isCatalogProductPro } = require('@catalog/client');
const documents = require('@catalog/api-documents/asyncapi.json');
const [baseUrl, sseUrl, apiKey] = process.argv.slice(2);
const catalog = createCatalogClient({ baseUrl, sseUrl, apiKey });
(async () => {
  const { data } = await catalog.getProduct(${JSON.stringify(CATALOG.dunk.id)});
  const controller = new AbortController();
  const prices = [];
  for await (const item of catalog.priceStream({ topics: [${JSON.stringify(TOPIC)}], lastEventId: 0, signal: controller.signal })) {
    if (item.type === 'price') prices.push(item.data.price);
    if (prices.length === 2) break;
  }
  console.log(JSON.stringify({ pro: isCatalogProductPro(data), prices, documents: documents.info.version }));
})();
`,
    );
    const output = await run(systemNode, ['consumer.cjs', server!.apiUrl, server!.streamUrl, proKey], projects.pnpm, join(ws.dir, 'consumer.npmrc'));
    expect(JSON.parse(output.trim())).toEqual({ pro: true, prices: usPrices, documents: version });
  });

  it('typechecks a consumer against the published declarations and documents (npm project, strict nodenext)', async () => {
    writeFileSync(
      join(projects.npm, 'consumer.ts'),
      `import { createCatalogClient, type PriceEvent } from '@catalog/client';
import openapi from '@catalog/api-documents/openapi.json' with { type: 'json' };
const catalog = createCatalogClient({ baseUrl: 'http://127.0.0.1:1', sseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
export async function latest(signal: AbortSignal): Promise<number> {
  const { count } = await catalog.countGtins();
  for await (const item of catalog.priceStream({ topics: ['price:marketplacea:us'], signal })) {
    if (item.type === 'price') {
      const event: PriceEvent = item.data;
      return event.price + count;
    }
  }
  return openapi.info.version.length;
}
`,
    );
    writeFileSync(
      join(projects.npm, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2024', module: 'nodenext', moduleResolution: 'nodenext', strict: true, exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true, resolveJsonModule: true, skipLibCheck: false, skipDefaultLibCheck: true, noEmit: true, lib: ['es2024', 'dom'], types: [],
        },
        files: ['consumer.ts'],
      }),
    );
    const output = await run(process.execPath, [join(typescriptDir, 'bin/tsc'), '-p', '.'], projects.npm, join(ws.dir, 'consumer.npmrc'));
    expect(output).toBe('');
  });
});
