// Fault: a response field is renamed (the server sends `total` where the spec says `count`, …).
// validateResponse, which judges every real-server response, must report it for every operation.
import { describe, expect, it } from 'vitest';
import { validateResponse } from '../support/spec.ts';
import { JSON_HEADERS, okBodies } from './bodies.ts';

type Obj = Record<string, unknown>;

function rename(target: Obj, from: string, to: string): void {
  target[to] = target[from];
  delete target[from];
}

/** The resource of a body: the first item of `data`, `data` itself, or the body (no envelope). */
function resourceOf(body: Obj): Obj {
  const data = body['data'];
  if (Array.isArray(data)) return data[0] as Obj;
  return data !== null && typeof data === 'object' ? (data as Obj) : body;
}

describe('a renamed response field', () => {
  const bodies = okBodies();
  for (const operationId of Object.keys(bodies) as (keyof typeof bodies)[]) {
    it(`is reported on ${operationId}, whose unbroken body conforms`, () => {
      const body = bodies[operationId];
      expect(validateResponse(operationId, 200, JSON_HEADERS, body)).toEqual([]);
      const broken = structuredClone(body);
      const resource = resourceOf(broken);
      // Every resource schema requires its first field (an id, a name or a count).
      const [first] = Object.keys(resource);
      rename(resource, first!, `${first!}_renamed`);
      expect(validateResponse(operationId, 200, JSON_HEADERS, broken).length).toBeGreaterThan(0);
    });
  }

  it('is reported in an error body (message renamed to detail)', () => {
    const body = { status: 'error', error: 'not_found', detail: 'No product.', query: {}, data: null, meta: null };
    expect(validateResponse('getProduct', 404, JSON_HEADERS, body).join('\n')).toMatch(/message|detail/);
  });
});
