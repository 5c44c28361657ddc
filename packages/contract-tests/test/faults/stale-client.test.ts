// Fault: the spec changes and the generated client is not regenerated. Generating with hey-api (the
// same plugins as packages/contract/openapi-ts.config.ts) from the bundled spec reproduces the committed
// client byte for byte; from a copy with one property renamed it does not. `pnpm check:generated`
// relies on the same property to fail on drift.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { OPENAPI_PATH, REPO_ROOT } from '../support/spec.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'contract-stale-client-'));
const COMMITTED = join(REPO_ROOT, 'packages/contract/src/generated');

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function files(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (path: string): void => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      if (statSync(full).isDirectory()) walk(full);
      else out.set(relative(root, full), readFileSync(full, 'utf8'));
    }
  };
  walk(root);
  return out;
}

function differing(a: Map<string, string>, b: Map<string, string>): string[] {
  return [...new Set([...a.keys(), ...b.keys()])].filter((name) => a.get(name) !== b.get(name)).sort();
}

async function generate(spec: string, out: string): Promise<Map<string, string>> {
  const bin = join(REPO_ROOT, 'packages/contract/node_modules/.bin/openapi-ts');
  await run(bin, ['-i', spec, '-o', out, '-c', '@hey-api/client-fetch', '-p', '@hey-api/typescript', '@hey-api/sdk', '-s', '--no-log-file'], { cwd: dir });
  return files(out);
}

describe('a stale generated client', () => {
  it('is detected: regenerating from a spec with a renamed property differs from the committed client', async () => {
    const renamed = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as { components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> } };
    const gtinCount = renamed.components.schemas['GtinCount'];
    if (gtinCount === undefined) throw new Error('GtinCount is not in the spec');
    gtinCount.properties = { total: gtinCount.properties['count'] };
    gtinCount.required = ['total'];
    const renamedPath = join(dir, 'openapi-renamed.json');
    writeFileSync(renamedPath, JSON.stringify(renamed));

    // packages/contract/scripts/generate.ts writes these beside hey-api's output, not hey-api.
    const committed = files(COMMITTED);
    for (const name of ['stream.gen.ts', 'operations.gen.ts', 'openapi.gen.ts', 'asyncapi.gen.ts']) committed.delete(name);
    const [fresh, stale] = await Promise.all([generate(OPENAPI_PATH, join(dir, 'fresh')), generate(renamedPath, join(dir, 'renamed'))]);
    // Control: the committed client is what the current spec generates.
    expect(differing(fresh, committed)).toEqual([]);
    // The fault: after the rename, the committed client no longer matches.
    expect(differing(stale, committed)).toContain('types.gen.ts');
    expect(stale.get('types.gen.ts')).toContain('total: number');
  }, 60_000);
});
