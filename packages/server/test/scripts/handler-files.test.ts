import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire, stripTypeScriptTypes } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { operations } from '@catalog/contract';
import type TypeScript from 'typescript';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateHandlers, handlerDrift, kebabCase, STUB_MARKER, stubText, type OperationRows } from '../../scripts/handler-files.ts';

// The workspace's TypeScript (a root devDependency), for compiling stubs in memory.
const ts = createRequire(join(import.meta.dirname, '../../../../package.json'))('typescript') as typeof TypeScript;

/** A table with one API and one stream operation that have handlers, and a new API operation that has none. */
const TABLE: OperationRows = {
  countGtins: { listener: 'api', method: 'GET', path: '/gtin/count' },
  streamPrices: { listener: 'stream', method: 'GET', path: '/v1/stream' },
  listWidgets: { listener: 'api', method: 'GET', path: '/v2/widgets' },
};
const IMPLEMENTED = "export const countGtins = () => ({ status: 200, body: { count: 1 } });\n";

describe('handler generation', () => {
  let server: string;
  const read = (path: string): string => readFileSync(join(server, path), 'utf8');

  beforeEach(() => {
    server = mkdtempSync(join(tmpdir(), 'handler-files-'));
    mkdirSync(join(server, 'src/http/handlers/generated'), { recursive: true });
    writeFileSync(join(server, 'src/http/handlers/count-gtins.ts'), IMPLEMENTED);
    writeFileSync(join(server, 'src/http/handlers/stream-prices.ts'), 'export const streamPrices = () => null;\n');
    writeFileSync(join(server, 'src/http/handlers/generated/left-over.gen.ts'), '// from an older run\n');
  });
  afterEach(() => rmSync(server, { recursive: true, force: true }));

  it('writes a typed stub for an operation without a handler, and only for it', () => {
    expect(generateHandlers(TABLE, server)).toEqual({ written: ['src/http/handlers/list-widgets.ts'], stubs: ['src/http/handlers/list-widgets.ts'] });
    const stub = read('src/http/handlers/list-widgets.ts');
    expect(stub.startsWith(STUB_MARKER)).toBe(true);
    expect(stub).toContain("import type { ApiHandler } from './api-services.ts';");
    expect(stub).toContain("export const listWidgets: ApiHandler<'listWidgets'> = (_request, _context) => notImplemented('listWidgets');");
    expect(read('src/http/handlers/count-gtins.ts')).toBe(IMPLEMENTED);
  });

  it('types a stream operation\'s stub with the stream listener\'s handler type', () => {
    rmSync(join(server, 'src/http/handlers/stream-prices.ts'));
    generateHandlers(TABLE, server);
    expect(read('src/http/handlers/stream-prices.ts')).toContain("export const streamPrices: StreamHandler<'streamPrices'> =");
  });

  it('never rewrites a handler file, a stub included', () => {
    generateHandlers(TABLE, server);
    const edited = `${read('src/http/handlers/list-widgets.ts')}// being written\n`;
    writeFileSync(join(server, 'src/http/handlers/list-widgets.ts'), edited);
    expect(generateHandlers(TABLE, server).written).toEqual([]);
    expect(read('src/http/handlers/list-widgets.ts')).toBe(edited);
  });

  it('maps every API operation to its file, and leaves the stream operation to the stream server', () => {
    generateHandlers(TABLE, server);
    const map = read('src/http/handlers/generated/handlers.gen.ts');
    expect(map).toContain("import { listWidgets } from '../list-widgets.ts';");
    expect(map).toContain("import { countGtins } from '../count-gtins.ts';");
    expect(map).toMatch(/export const handlers: Handlers<ApiOperationId, ApiServices> = \{\n {2}countGtins,\n {2}listWidgets,\n\};/);
    expect(map).not.toContain('streamPrices');
  });

  it('writes one test case per operation that fails while its handler is a stub', () => {
    generateHandlers(TABLE, server);
    const test = read('test/http/generated/handlers.gen.test.ts');
    expect(test).toContain("it('listWidgets is implemented', () => expectImplemented('list-widgets.ts'));");
    expect(test).toContain("it('streamPrices is implemented', () => expectImplemented('stream-prices.ts'));");
    expect(test).toContain(`text.startsWith('${STUB_MARKER}')`);
    expect(test).toContain('packages/server/src/http/handlers/${file} is still the generated stub');
  });

  it('empties the generated folders on each run', () => {
    generateHandlers(TABLE, server);
    expect(() => read('src/http/handlers/generated/left-over.gen.ts')).toThrow(/ENOENT/);
  });

  it('writes files Node runs as they are (erasable TypeScript only)', () => {
    generateHandlers(TABLE, server);
    for (const path of ['src/http/handlers/list-widgets.ts', 'src/http/handlers/generated/handlers.gen.ts', 'test/http/generated/handlers.gen.test.ts']) {
      expect(() => stripTypeScriptTypes(read(path)), path).not.toThrow();
    }
  });

  it('reports drift without writing: a missing handler, a changed or stray generated file', () => {
    expect(handlerDrift(TABLE, server)).toEqual([
      'missing: src/http/handlers/list-widgets.ts (`pnpm generate` writes its stub)',
      'added: src/http/handlers/generated/handlers.gen.ts',
      'removed: src/http/handlers/generated/left-over.gen.ts',
      'added: test/http/generated/handlers.gen.test.ts',
    ]);
    expect(() => read('src/http/handlers/list-widgets.ts')).toThrow(/ENOENT/);
    generateHandlers(TABLE, server);
    expect(handlerDrift(TABLE, server)).toEqual([]);
    writeFileSync(join(server, 'src/http/handlers/generated/handlers.gen.ts'), '// edited\n');
    expect(handlerDrift(TABLE, server)).toEqual(['changed: src/http/handlers/generated/handlers.gen.ts']);
  });
});

describe('kebabCase', () => {
  it('names a handler file after its camelCase operationId', () => {
    expect(kebabCase('listTopBrands')).toBe('list-top-brands');
    expect(kebabCase('countGtins')).toBe('count-gtins');
    expect(kebabCase('getURLStatus')).toBe('get-url-status');
  });

  it('refuses an operationId that cannot name a handler', () => {
    expect(() => kebabCase('list_top')).toThrow(/not camelCase/);
    expect(() => kebabCase('ListTop')).toThrow(/not camelCase/);
  });
});

describe('a stub, as written for each operation of the contract', () => {
  // Compiled in memory beside the real handlers, with the package's tsconfig: files under the
  // handlers folder that exist only in this program, so nothing is written into src/.
  const serverDir = join(import.meta.dirname, '../..');
  const handlersDir = join(serverDir, 'src/http/handlers');
  const diagnosticsOf = (files: Map<string, string>): string[] => {
    const config = ts.getParsedCommandLineOfConfigFile(join(serverDir, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
    if (config === undefined) throw new Error('packages/server/tsconfig.json does not parse');
    const host = ts.createCompilerHost(config.options);
    const { fileExists, readFile, getSourceFile } = host;
    host.fileExists = (file) => files.has(file) || fileExists(file);
    host.readFile = (file) => files.get(file) ?? readFile(file);
    host.getSourceFile = (file, language, ...rest) => {
      const text = files.get(file);
      return text === undefined ? getSourceFile(file, language, ...rest) : ts.createSourceFile(file, text, language);
    };
    const program = ts.createProgram([...files.keys()], config.options, host);
    return [...files.keys()].flatMap((file) =>
      ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((diagnostic) => `${file}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`),
    );
  };

  it('typechecks as its operation\'s handler, for both listeners', () => {
    const stubs = new Map(Object.entries(operations).map(([id, row]) => [join(handlersDir, `stub-of-${kebabCase(id)}.ts`), stubText(id, row)]));
    // Not vacuous: a handler with an undocumented status is refused by the same program.
    const undocumented = join(handlersDir, 'undocumented-status.ts');
    stubs.set(undocumented, "import type { ApiHandler } from './api-services.ts';\nexport const listTopBrands: ApiHandler<'listTopBrands'> = () => ({ status: 418, body: null });\n");
    const diagnostics = diagnosticsOf(stubs);
    expect(diagnostics.filter((line) => !line.startsWith(undocumented))).toEqual([]);
    expect(diagnostics.find((line) => line.startsWith(undocumented))).toMatch(/'418'/);
  }, 60_000);
});
