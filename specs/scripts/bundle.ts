// Bundles the contract into self-contained JSON documents in dist/: every reference to a shared
// schema file (../schemas/*.yaml) is replaced by the file's content, minus `$schema` and `$id`
// (a schema embedded in an OpenAPI or AsyncAPI document takes its identity from its location).
// The output is deterministic: same inputs, same bytes, so generated code can be checked for drift.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function loadYaml(path: string): Json {
  return parse(readFileSync(path, 'utf8')) as Json;
}

function inlineExternalRefs(node: Json, baseDir: string): Json {
  if (Array.isArray(node)) return node.map((item) => inlineExternalRefs(item, baseDir));
  if (node === null || typeof node !== 'object') return node;
  const ref = node['$ref'];
  if (typeof ref === 'string' && !ref.startsWith('#')) {
    const target = resolve(baseDir, ref);
    const loaded = loadYaml(target);
    if (loaded === null || typeof loaded !== 'object' || Array.isArray(loaded)) {
      throw new Error(`${ref}: a shared schema must be an object`);
    }
    const { $schema: _schema, $id: _id, ...schema } = loaded;
    return inlineExternalRefs(schema, dirname(target));
  }
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) out[key] = inlineExternalRefs(value, baseDir);
  return out;
}

function bundle(source: string, target: string): void {
  const path = join(root, source);
  const document = inlineExternalRefs(loadYaml(path), dirname(path));
  mkdirSync(join(root, 'dist'), { recursive: true });
  // Written aside, then renamed: `pnpm mock` bundles in two processes at once, and a reader must
  // never see a half-written document.
  const output = join(root, 'dist', target);
  writeFileSync(`${output}.${process.pid}.tmp`, `${JSON.stringify(document, null, 2)}\n`);
  renameSync(`${output}.${process.pid}.tmp`, output);
  console.log(`bundled ${source} -> dist/${target}`);
}

bundle('openapi/openapi.yaml', 'openapi.json');
bundle('asyncapi/asyncapi.yaml', 'asyncapi.json');
