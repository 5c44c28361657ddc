// `pnpm check:breaking` as a spec author meets it: an unchanged contract passes; an operation or a
// stream channel removed fails, naming it and the rule that found it breaking, until the major
// version is raised; every change is listed with its classification.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/spec.ts';
import { workspace } from './support/server.ts';

const run = promisify(execFile);
const ws = workspace('check-breaking');
afterAll(() => ws.dispose());

interface Json {
  info: { version: string; description: string };
  paths: Record<string, unknown>;
  channels: Record<string, unknown>;
}
const released = (name: string): Json => JSON.parse(readFileSync(join(REPO_ROOT, 'specs/released', name), 'utf8')) as Json;

async function check(name: string, change: (openapi: Json, asyncapi: Json) => void): Promise<{ code: number; output: string }> {
  const dir = join(ws.dir, name);
  mkdirSync(dir, { recursive: true });
  const [openapi, asyncapi] = [released('openapi.json'), released('asyncapi.json')];
  change(openapi, asyncapi);
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(openapi));
  writeFileSync(join(dir, 'asyncapi.json'), JSON.stringify(asyncapi));
  try {
    const { stdout } = await run(process.execPath, [join(REPO_ROOT, 'scripts/check-breaking.ts'), '--current', dir]);
    return { code: 0, output: stdout };
  } catch (error) {
    const failure = error as { code: number; stdout: string };
    return { code: failure.code, output: failure.stdout };
  }
}

describe('pnpm check:breaking', () => {
  it('passes on the released contract, and on the contract in specs/', async () => {
    expect((await check('unchanged', () => {})).code).toBe(0);
    const { stdout } = await run(process.execPath, [join(REPO_ROOT, 'scripts/check-breaking.ts')]);
    expect(stdout).toContain('openapi.json');
  });

  it('passes on a change that breaks nothing (a description edited)', async () => {
    const result = await check('annotation', (openapi) => {
      openapi.info.description += '\nOne more line.';
    });
    expect(result.code).toBe(0);
    // Every change is a row: classification, where, what, and the rule that classified it.
    expect(result.output).toMatch(/annotation\s+\| info\/description\s+\| .+ \| api-smart-diff: replace at info\/description/);
  });

  it('fails on an operation removed, naming it, and passes once the major version is raised', async () => {
    const removed = await check('removed', (openapi) => {
      delete openapi.paths['/v2/brands'];
    });
    expect(removed.code).toBe(1);
    expect(removed.output).toMatch(/breaking\s+\| paths\/\/v2\/brands\/get\s+\|/);
    expect(removed.output).toContain('api-smart-diff: remove at paths/{path}/get (a removed operation fails every caller)');
    expect(removed.output).toContain('raise info.version to 2.0.0');
    const raised = await check('raised', (openapi) => {
      delete openapi.paths['/v2/brands'];
      openapi.info.version = '2.0.0';
    });
    expect(raised.code).toBe(0);
  });

  it('fails on a stream channel removed from the AsyncAPI document', async () => {
    const result = await check('channel', (_openapi, asyncapi) => {
      delete asyncapi.channels['prices'];
    });
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/asyncapi\.json[\s\S]*breaking\s+\| channels\/prices\s+\|.*@asyncapi\/diff standard: remove at channels\/\{channel\} \(a removed channel fails every subscriber\)/);
  });
});
