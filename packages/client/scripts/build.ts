// Builds the published package: ESM with declarations into dist/ (for `import`), and the same
// sources as CommonJS with declarations into dist/cjs/ (for `require()`), which a package.json of
// its own marks as CommonJS. package.json#exports picks one by condition.
// The generated types and SDK live in @catalog/contract, a private workspace package; the tarball
// must not depend on it. So the build compiles a staged copy (.build/): src/ plus the contract's
// src/generated/ as src/contract/, with every `@catalog/contract/<entry>` specifier rewritten to
// the staged file. Only generated modules can be inlined this way (they import nothing outside
// src/generated/); importing any other contract entry fails the build.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const contractRoot = dirname(require.resolve('@catalog/contract/package.json'));
const contractExports = (JSON.parse(readFileSync(join(contractRoot, 'package.json'), 'utf8')) as { exports: Record<string, string> }).exports;
const stage = join(root, '.build');
const GENERATED = './src/generated/';

rmSync(join(root, 'dist'), { recursive: true, force: true });
rmSync(stage, { recursive: true, force: true });
cpSync(join(root, 'src'), join(stage, 'src'), { recursive: true });
cpSync(join(contractRoot, 'src/generated'), join(stage, 'src/contract'), { recursive: true });

for (const entry of readdirSync(join(stage, 'src'), { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.parentPath.startsWith(join(stage, 'src/contract'))) continue;
  const file = join(entry.parentPath, entry.name);
  const source = readFileSync(file, 'utf8').replace(/(['"])@catalog\/contract(\/[^'"]*)?\1/g, (_match, quote: string, subpath = '') => {
    const target = contractExports[`.${subpath}`];
    if (target === undefined || !target.startsWith(GENERATED)) {
      throw new Error(`${relative(stage, file)}: @catalog/contract${subpath} is not a generated module the build can inline`);
    }
    const staged = join(stage, 'src/contract', target.slice(GENERATED.length)).replace(/\.ts$/, '.js');
    const specifier = relative(entry.parentPath, staged);
    return `${quote}${specifier.startsWith('.') ? specifier : `./${specifier}`}${quote}`;
  });
  writeFileSync(file, source);
}

for (const [project, outDir] of [['tsconfig.build.json', 'dist'], ['tsconfig.cjs.json', 'dist/cjs']] as const) {
  const config = join(stage, project);
  // Only what src/index.ts reaches is compiled: the documents and the operation table stay out.
  writeFileSync(config, JSON.stringify({ extends: join(root, project), compilerOptions: { rootDir: 'src', outDir: join(root, outDir) }, include: [], files: ['src/index.ts'] }));
  execFileSync(process.execPath, [tsc, '-p', config], { stdio: 'inherit' });
}
writeFileSync(join(root, 'dist/cjs/package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
rmSync(stage, { recursive: true, force: true });
