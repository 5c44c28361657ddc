// `pnpm contract-test --base-url URL --sse-url URL --free-key KEY --pro-key KEY`: runs the
// contract's checks (deployment/deployment.test.ts) against any deployment and prints a report
// per operation and check. Exit status 0 when every check passes, 1 when one fails, 2 on bad usage.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = `usage: pnpm contract-test --base-url URL --sse-url URL --free-key KEY --pro-key KEY [--runs N] [--stream-seconds S] [--seed N]

  --base-url        the HTTP API, e.g. https://catalog.example.com
  --sse-url         the price stream, e.g. https://stream.catalog.example.com
  --free-key        a key on the free plan
  --pro-key         a key on the Pro plan
  --runs            generated valid and invalid requests per operation (default 25); each counts
                    against the keys' rate limits
  --stream-seconds  how long to wait for a price event or a heartbeat (default 20)
  --seed            replays the generated requests of an earlier run (printed in the report)
`;

let values;
try {
  ({ values } = parseArgs({
    options: {
      'base-url': { type: 'string' },
      'sse-url': { type: 'string' },
      'free-key': { type: 'string' },
      'pro-key': { type: 'string' },
      runs: { type: 'string' },
      'stream-seconds': { type: 'string' },
      seed: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  }));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
if (values.help === true) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const missing = ['base-url', 'sse-url', 'free-key', 'pro-key'].filter((name) => values[name as keyof typeof values] === undefined);
if (missing.length > 0) {
  process.stderr.write(`missing ${missing.map((name) => `--${name}`).join(', ')}\n\n${USAGE}`);
  process.exit(2);
}

const root = join(import.meta.dirname, '..');
// vitest's package.json is exported; its CLI sits beside it.
const vitest = join(dirname(createRequire(join(root, 'package.json')).resolve('vitest/package.json')), 'vitest.mjs');
const result = spawnSync(process.execPath, [vitest, 'run', '--config', join(root, 'vitest.deployment.config.ts'), '--reporter', 'verbose'], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    CONTRACT_BASE_URL: values['base-url'],
    CONTRACT_SSE_URL: values['sse-url'],
    CONTRACT_FREE_KEY: values['free-key'],
    CONTRACT_PRO_KEY: values['pro-key'],
    CONTRACT_STREAM_SECONDS: values['stream-seconds'] ?? '20',
    FC_RUNS: values.runs ?? '25',
    ...(values.seed === undefined ? {} : { FC_SEED: values.seed }),
  },
});
process.exit(result.status === 0 ? 0 : 1);
