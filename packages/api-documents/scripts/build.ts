// Builds the published package: the contract's bundled documents (@catalog/specs, `pnpm --filter
// @catalog/specs bundle`) copied into dist/ as JSON, and the same documents as YAML. The JSON is
// copied byte for byte, so a consumer reads exactly what `pnpm check:breaking` compared; the YAML is
// the same data (YAML 1.2, no anchors), for generators that prefer it.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { stringify } from 'yaml';

const root = join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const dist = join(root, 'dist');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist);
for (const name of ['openapi', 'asyncapi']) {
  const json = readFileSync(require.resolve(`@catalog/specs/${name}.json`), 'utf8');
  const document = JSON.parse(json) as { info: { version: string } };
  // The release writes the package's version into both documents (scripts/release.ts); a package
  // whose documents say otherwise would pin one version and describe another.
  if (document.info.version !== version) {
    throw new Error(`${name}.json says info.version ${document.info.version}, the package is ${version}: run the release (pnpm release) rather than editing either`);
  }
  writeFileSync(join(dist, `${name}.json`), json);
  writeFileSync(join(dist, `${name}.yaml`), stringify(document, { aliasDuplicateObjects: false, lineWidth: 0 }));
}
