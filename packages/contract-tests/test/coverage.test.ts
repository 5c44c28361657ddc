// Issue 6 item 6: every operationId × documented status has a case. The mock suite derives its cases
// from the spec itself (client-vs-mock.test.ts), so it covers whatever the spec documents; the real
// server's cases are the table in server-cases.ts, checked here against the spec's operation table.
// A status the spec adds without a case, or a case for a status the spec does not document, fails.
import { describe, expect, it } from 'vitest';
import { ALLOWLIST, caseKey, SERVER_CASES } from './server-cases.ts';
import { documentedCases, operations } from './support/spec.ts';

describe('coverage of operationId × documented status', () => {
  const documented = new Set(documentedCases());
  const covered = new Set(SERVER_CASES.map(caseKey));

  it('has a real-server case or an allowlisted reason for every documented status', () => {
    const missing = [...documented].filter((key) => !covered.has(key) && !(key in ALLOWLIST));
    expect(missing).toEqual([]);
  });

  it('has no case for a status the spec does not document', () => {
    expect([...covered].filter((key) => !documented.has(key))).toEqual([]);
    expect(Object.keys(ALLOWLIST).filter((key) => !documented.has(key))).toEqual([]);
  });

  it('allowlists only what no case covers, each with a reason', () => {
    expect(Object.keys(ALLOWLIST).filter((key) => covered.has(key))).toEqual([]);
    for (const reason of Object.values(ALLOWLIST)) expect(reason.length).toBeGreaterThan(20);
    // Only the failure statuses the server cannot be made to produce from outside.
    expect(new Set(Object.keys(ALLOWLIST).map((key) => key.split(' ')[1]))).toEqual(new Set(['500', '503']));
  });

  it('exercises every operation with a 200 on the real server', () => {
    for (const op of operations) expect(covered.has(`${op.operationId} 200`), op.operationId).toBe(true);
  });

  it('reaches every operation of the spec through the generated client against the mock', async () => {
    const source = await import('node:fs').then((fs) => fs.readFileSync(new URL('./client-vs-mock.test.ts', import.meta.url), 'utf8'));
    for (const op of operations) expect(source, op.operationId).toContain(`case '${op.operationId}'`);
  });
});
