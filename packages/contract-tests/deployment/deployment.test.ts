// The contract checks a consumer team runs against any deployment (`pnpm contract-test`, see
// bin/contract-test.ts and README.md): no fixture data is assumed. Per operation, generated valid
// and invalid requests judged by the Schemathesis checklist (requests.ts); the refusals every
// deployment must give (no key, a free key on Pro operations, another method); free and Pro product
// detail on ids the deployment itself returns; and the price stream: headers, `retry`, every frame
// against the AsyncAPI document, and life (an event or a heartbeat) within the window.
import { describe, expect, it } from 'vitest';
import { FC_RUNS, FC_SEED, runGeneratedRequests, type Target } from '../test/requests.ts';
import { operations as contractOperations, type OperationId } from '@catalog/contract';
import { operation, operations, parseSse, validateFrame, validateFreeProduct, validateProProduct, validateResponse } from '../test/support/spec.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set; run this suite through bin/contract-test.ts`);
  return value;
};
const BASE_URL = env('CONTRACT_BASE_URL').replace(/\/+$/, '');
const SSE_URL = env('CONTRACT_SSE_URL').replace(/\/+$/, '');
const FREE_KEY = env('CONTRACT_FREE_KEY');
const PRO_KEY = env('CONTRACT_PRO_KEY');
const STREAM_SECONDS = Number(process.env['CONTRACT_STREAM_SECONDS'] ?? '20');
const TOPICS = 'price:marketplacea:us, price:marketplacea:uk, price:marketplaceb:us, price:marketplaceb:nl, price:marketplaceb:de';

const contractOf = (operationId: string) => {
  const found = (contractOperations as Record<string, (typeof contractOperations)[OperationId] | undefined>)[operationId];
  if (found === undefined) throw new Error(`${operationId} is not in @catalog/contract's operation table; run pnpm generate`);
  return found;
};
const baseUrlOf = (operationId: string): string => (contractOf(operationId).listener === 'stream' ? SSE_URL : BASE_URL);
/** A value for each required header, by name, that the deployment accepts. */
const HEADER_VALUES: Record<string, string> = { Topics: TOPICS };
const requiredHeaders = (operationId: string): Record<string, string> =>
  Object.fromEntries(
    operation(operationId)
      .parameters.filter((parameter) => parameter.in === 'header' && parameter.required)
      .map((parameter) => {
        const value = HEADER_VALUES[parameter.name];
        if (value === undefined) throw new Error(`${operationId} requires the header ${parameter.name}: add a value to HEADER_VALUES in packages/contract-tests/deployment/deployment.test.ts`);
        return [parameter.name, value];
      }),
  );
const PRO_ONLY = operations.filter((op) => op.plans.length === 1 && op.plans[0] === 'pro').map((op) => op.operationId);

async function get(url: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(url, { method, headers, signal: AbortSignal.timeout(15_000) });
  if (response.headers.get('content-type')?.startsWith('text/event-stream') === true) {
    await response.body?.cancel();
    return { status: response.status, headers: response.headers, text: '' };
  }
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const credential = (operationId: string, key: string): Record<string, string> =>
  contractOf(operationId).credential === 'bearer' ? { Authorization: `Bearer ${key}` } : { Authorization: key };
/** The operation's path with every parameter filled by an id that names nothing: refusals come before look-ups. */
const pathOf = (operationId: string): string =>
  contractOf(operationId).pathParameters.reduce<string>((path, name) => path.replace(`{${name}}`, '00000000-0000-4000-8000-000000000000'), contractOf(operationId).path);

describe(`the deployment at ${BASE_URL} (stream ${SSE_URL})`, () => {
  for (const op of operations) {
    describe(op.operationId, () => {
      it(`conforms on ${FC_RUNS} valid and ${FC_RUNS} invalid generated requests (seed ${FC_SEED})`, async () => {
        const target: Target = {
          name: 'deployment',
          baseUrl: (o) => baseUrlOf(o.operationId),
          validKey: PRO_KEY,
          knowsKeys: true,
          answersWrongMethods: true,
          semanticValidation: true,
          reportsViolations: false,
        };
        const counts = await runGeneratedRequests(op, target);
        expect(counts.valid + counts.invalid).toBeGreaterThan(0);
      }, 300_000);

      it('refuses a request without a key with 401 in the documented shape', async () => {
        const answer = await get(`${baseUrlOf(op.operationId)}${pathOf(op.operationId)}`, requiredHeaders(op.operationId));
        expect(answer.status).toBe(401);
        expect(validateResponse(op.operationId, answer.status, answer.headers, answer.text)).toEqual([]);
      });

      it('answers another method with 405 and Allow', async () => {
        const answer = await get(`${baseUrlOf(op.operationId)}${pathOf(op.operationId)}`, credential(op.operationId, PRO_KEY), 'POST');
        expect(answer.status).toBe(405);
        expect(answer.headers.get('allow')).toBeTruthy();
        expect(validateResponse(op.operationId, answer.status, answer.headers, answer.text)).toEqual([]);
      });

      if (PRO_ONLY.includes(op.operationId)) {
        it('refuses a free key with 403', async () => {
          const headers = { ...credential(op.operationId, FREE_KEY), ...requiredHeaders(op.operationId) };
          const answer = await get(`${baseUrlOf(op.operationId)}${pathOf(op.operationId)}`, headers);
          expect(answer.status).toBe(403);
          expect(validateResponse(op.operationId, answer.status, answer.headers, answer.text)).toEqual([]);
        });
      }
    });
  }

  it('gives a free key exactly the free product detail, and a Pro key the Pro detail, on products the deployment lists', async () => {
    const ids = new Set<string>();
    for (const fragment of ['0000', '1234', '5678', '9999', '0001', '1111']) {
      const page = await get(`${BASE_URL}/v2/variants?gtin=${fragment}&limit=10`, { Authorization: PRO_KEY });
      expect(page.status).toBe(200);
      for (const variant of (JSON.parse(page.text) as { data: { product_id: string }[] }).data) if (ids.size < 5) ids.add(variant.product_id);
    }
    const { count } = JSON.parse((await get(`${BASE_URL}/gtin/count`, { Authorization: `Bearer ${PRO_KEY}` })).text) as { count: number };
    // Only an empty catalog has nothing to look at.
    if (count > 0) expect(ids.size, 'products found by GTIN fragments').toBeGreaterThan(0);
    for (const id of ids) {
      const free = await get(`${BASE_URL}/v2/products/${encodeURIComponent(id)}`, { Authorization: FREE_KEY });
      expect(free.status).toBe(200);
      expect(validateFreeProduct(JSON.parse(free.text)), id).toEqual([]);
      const pro = await get(`${BASE_URL}/v2/products/${encodeURIComponent(id)}`, { Authorization: PRO_KEY });
      expect(validateProProduct(JSON.parse(pro.text)), id).toEqual([]);
    }
  });

  it(`streams frames the AsyncAPI document allows, with signs of life within ${STREAM_SECONDS} s`, async () => {
    const controller = new AbortController();
    const response = await fetch(`${SSE_URL}/v1/stream`, { headers: { Authorization: `Bearer ${PRO_KEY}`, Topics: TOPICS }, signal: controller.signal });
    expect(response.status).toBe(200);
    expect(validateResponse('streamPrices', response.status, response.headers, '')).toEqual([]);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const until = Date.now() + STREAM_SECONDS * 1000;
    const timer = setTimeout(() => controller.abort(), STREAM_SECONDS * 1000);
    try {
      // Read until an event or a heartbeat after the opening `retry:` block, or the window ends.
      while (Date.now() < until) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
        const blocks = text.split('\n\n');
        if (blocks.length > 2) break;
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
    const complete = text.slice(0, text.lastIndexOf('\n\n') + 2);
    const { frames, retry, blocks } = parseSse(complete);
    expect(retry.length, 'a retry field first').toBeGreaterThan(0);
    expect(complete.split('\n\n').filter((block) => block !== '').length, 'an event or a heartbeat within the window').toBeGreaterThan(1);
    for (const frame of frames) expect(validateFrame(frame), blocks.join('\n\n')).toEqual([]);
  }, (STREAM_SECONDS + 15) * 1000);
});
