// Issue 6 item 3 against Prism: FC_RUNS (default 100) valid and FC_RUNS invalid generated requests
// per operation, judged by the Schemathesis checklist in requests.ts. Prism validates requests from
// the same document, so it also cross-checks the sampler: a request the sampler calls valid must raise
// no request violation, and a schema-level mutation must raise one. The same checker runs against the
// real server in server-vs-spec.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FC_RUNS, FC_SEED, runGeneratedRequests, type Target } from './requests.ts';
import { type Prism, startPrism } from './support/prism.ts';
import { operations } from './support/spec.ts';

let prism: Prism;
let target: Target;

beforeAll(async () => {
  prism = await startPrism({ mode: 'mock' });
  target = {
    name: 'prism mock',
    baseUrl: () => prism.url,
    validKey: 'mock-key-3c1f9e0a2b7d4c58',
    knowsKeys: false,
    answersWrongMethods: false,
    semanticValidation: false,
    reportsViolations: true,
  };
  process.stderr.write(`generated requests: FC_SEED=${FC_SEED} FC_RUNS=${FC_RUNS} (set FC_SEED to replay)\n`);
});

afterAll(async () => {
  await prism.stop();
});

for (const op of operations) {
  describe(op.operationId, () => {
    it(`conforms on ${FC_RUNS} valid and ${FC_RUNS} invalid generated requests (seed ${FC_SEED})`, async () => {
      const counts = await runGeneratedRequests(op, target);
      process.stderr.write(`${op.operationId} on prism: ${counts.valid} valid, ${counts.invalid} invalid, ${counts.skipped} not judgeable by a mock\n`);
      expect(counts.valid).toBeGreaterThanOrEqual(FC_RUNS);
      expect(counts.invalid).toBeGreaterThanOrEqual(FC_RUNS);
    }, 120_000);
  });
}
