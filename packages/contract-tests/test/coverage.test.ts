// Issue 6 item 6: every operationId × documented status has a case. The mock suite derives its cases
// from the spec itself (client-vs-mock.test.ts), so it covers whatever the spec documents; the real
// server's cases are the table in server-cases.ts, checked here against the spec's operation table.
// A status the spec adds without a case, or a case for a status the spec does not document, fails.
// Every message names the file to edit and what to add there.
import { describe, expect, it } from 'vitest';
import * as sdk from '@catalog/contract/sdk';
import { ALLOWLIST, caseKey, SERVER_CASES } from './server-cases.ts';
import { documentedCases, operations } from './support/spec.ts';
import { documentedWebhookCases, WEBHOOK_CASES, webhookCaseKey } from './webhook-cases.ts';

const CASES_FILE = 'packages/contract-tests/test/server-cases.ts';
const listed = (keys: string[]): string => keys.map((key) => `\n  ${key}`).join('');

describe('coverage of operationId × documented status', () => {
  const documented = new Set(documentedCases());
  const covered = new Set(SERVER_CASES.map(caseKey));

  it('has a real-server case or an allowlisted reason for every documented status', () => {
    const missing = [...documented].filter((key) => !covered.has(key) && !(key in ALLOWLIST));
    expect(
      missing,
      `operationId × status the spec documents with no case: add to SERVER_CASES in ${CASES_FILE} one case each ` +
        `({ operationId, status, server, behaviour, path, headers, expectBody }), or, for a 500 or 503 no request can provoke, a reason to ALLOWLIST there:${listed(missing)}`,
    ).toEqual([]);
  });

  it('has no case for a status the spec does not document', () => {
    const undocumentedCases = [...covered].filter((key) => !documented.has(key));
    expect(undocumentedCases, `SERVER_CASES in ${CASES_FILE} has cases for statuses the spec does not document: document the status in specs/openapi/openapi.yaml or remove the case:${listed(undocumentedCases)}`).toEqual([]);
    const undocumentedAllowed = Object.keys(ALLOWLIST).filter((key) => !documented.has(key));
    expect(undocumentedAllowed, `ALLOWLIST in ${CASES_FILE} names statuses the spec does not document: remove them:${listed(undocumentedAllowed)}`).toEqual([]);
  });

  it('allowlists only what no case covers, each with a reason', () => {
    const allowedButCovered = Object.keys(ALLOWLIST).filter((key) => covered.has(key));
    expect(allowedButCovered, `ALLOWLIST in ${CASES_FILE} excuses statuses SERVER_CASES covers: remove them from ALLOWLIST:${listed(allowedButCovered)}`).toEqual([]);
    for (const [key, reason] of Object.entries(ALLOWLIST)) expect(reason.length, `ALLOWLIST['${key}'] in ${CASES_FILE}: give a reason of more than 20 characters`).toBeGreaterThan(20);
    // Only the failure statuses the server cannot be made to produce from outside.
    const provokable = Object.keys(ALLOWLIST).filter((key) => !['500', '503'].includes(key.split(' ')[1] ?? ''));
    expect(provokable, `ALLOWLIST in ${CASES_FILE} excuses statuses a request can provoke: write a case in SERVER_CASES instead:${listed(provokable)}`).toEqual([]);
  });

  it('exercises every operation with a 200 on the real server', () => {
    const without200 = operations.filter((op) => !covered.has(`${op.operationId} 200`)).map((op) => op.operationId);
    expect(without200, `operations with no 200 case on the real server: add one to SERVER_CASES in ${CASES_FILE}:${listed(without200)}`).toEqual([]);
  });

  it('has a real-server case for every webhook × documented receiver answer, and none for an undocumented one', () => {
    const documentedWebhooks = new Set(documentedWebhookCases());
    const coveredWebhooks = new Set(WEBHOOK_CASES.map(webhookCaseKey));
    const missing = [...documentedWebhooks].filter((key) => !coveredWebhooks.has(key));
    expect(missing, `webhook × status the spec documents with no case: add one to WEBHOOK_CASES in packages/contract-tests/test/webhook-cases.ts:${listed(missing)}`).toEqual([]);
    // 500 stands for "any other answer" (the webhook's `default` response).
    const undocumented = [...coveredWebhooks].filter((key) => !documentedWebhooks.has(key) && !key.endsWith(' 500'));
    expect(undocumented, `WEBHOOK_CASES has cases for answers the spec does not document:${listed(undocumented)}`).toEqual([]);
  });

  it('has a generated client call for every operation of the spec, which client-vs-mock.test.ts makes against the mock', () => {
    const noCall = operations.filter((op) => typeof (sdk as Record<string, unknown>)[op.operationId] !== 'function').map((op) => op.operationId);
    expect(noCall, `the generated SDK lacks operations of specs/: run pnpm generate:${listed(noCall)}`).toEqual([]);
  });
});
