// `pnpm bundle:server <dir>`: the server and its production dependencies, with their own Node 24
// runtime (the `node24` package), deployed into <dir> by `pnpm deploy --prod`.
//
// pnpm keeps the files an install script built (the runtime package unpacks its binary) keyed by
// the Node found on PATH, and reuses them in a deploy only under the same key. `pnpm install` ran
// with the shell's Node; a package script's PATH starts with the workspace's node_modules/.bin,
// whose `node` is Node 24, so a deploy started from the script itself would find no built runtime
// under that key and run its install script again: a download and unpacking of the runtime, minutes
// on a first run. The deploy therefore runs with the PATH the shell had, those folders left out.
import { execFileSync } from 'node:child_process';
import { delimiter, join } from 'node:path';

const root = join(import.meta.dirname, '..');
const target = process.argv[2];
if (target === undefined) {
  process.stderr.write('usage: pnpm bundle:server <dir>\n');
  process.exit(2);
}
const shellPath = (process.env['PATH'] ?? '')
  .split(delimiter)
  .filter((dir) => !dir.split(/[\\/]/u).includes('node_modules'))
  .join(delimiter);
// The pnpm running this script (npm_execpath), else the one on the shell's PATH.
const pnpm = process.env['npm_execpath'] ?? 'pnpm';
const viaNode = /\.[cm]?js$/u.test(pnpm);
execFileSync(viaNode ? 'node' : pnpm, [...(viaNode ? [pnpm] : []), '--filter', '@catalog/server', 'deploy', '--prod', target], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PATH: shellPath },
});
