// A listener's Express shell with routes outside the contract, on a bare listener: path matching, 404 and 405,
// bodies refused, and a route that fails answering 500 rather than leaving the client waiting.
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { serveBare, type BareListener } from '../support/bare-listener.ts';
import { sendJson } from '../../src/http/exchange.ts';
import { createShell, staticRoutes, type StaticRoute } from '../../src/http/express-shell.ts';
import { createLogger } from '../../src/logger.ts';

const lines: Record<string, unknown>[] = [];
const logger = createLogger({ level: 'info', write: (text) => lines.push(JSON.parse(text) as Record<string, unknown>) });

let served: BareListener | undefined;
afterEach(async () => {
  lines.length = 0;
  await served?.close();
  served = undefined;
});

async function startRouter(routes: [string, StaticRoute, string?][]): Promise<string> {
  const app = createShell({
    listener: 'api',
    logger,
    routes: [staticRoutes(routes.map(([path, answer, name]) => (name === undefined ? [path, answer] : [path, answer, name])))],
    notFound: (path) => `Nothing at ${path}.`,
  });
  served = await serveBare(app);
  return served.url;
}

const ok: StaticRoute = (req, res) => sendJson(logger, req, res, 200, { status: 'ok' });

async function answer(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(2000) });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

describe('staticRoutes', () => {
  it('matches a route case-insensitively and with one trailing slash, and nothing that only shares its prefix', async () => {
    const url = await startRouter([['/healthz', ok]]);
    expect((await answer(`${url}/HealthZ/`)).status).toBe(200);
    expect((await answer(`${url}/healthy`)).status).toBe(404);
  });

  it('names a request in its access line by the route name, or by the route path when it has none', async () => {
    const url = await startRouter([['/healthz', ok], ['/docs/assets/a.css', ok, '/docs/assets']]);
    await answer(`${url}/healthz`);
    await answer(`${url}/docs/assets/a.css`);
    expect(lines.filter((line) => line['msg'] === 'request').map((line) => line['operation'])).toEqual(['/healthz', '/docs/assets']);
  });

  it.each([
    ['a path of 100 characters in full', 99, ''],
    ['a longer path cut at 100 characters', 100, '…'],
  ])('names %s in the 404 message', async (_case, length, tail) => {
    const url = await startRouter([]);
    const path = `/${'a'.repeat(length)}`;
    const { status, body } = await answer(`${url}${path}`);
    expect([status, body['error']]).toEqual([404, 'not_found']);
    expect(body['message']).toBe(`Nothing at ${path.slice(0, 100)}${tail}.`);
  });

  it('refuses another method with 405, naming it, and Allow', async () => {
    const url = await startRouter([['/healthz', ok]]);
    const { status, headers, body } = await answer(`${url}/healthz`, { method: 'DELETE' });
    expect([status, body['error'], headers.get('allow')]).toEqual([405, 'method_not_allowed', 'GET, HEAD']);
    expect(body['message']).toBe('DELETE is not allowed here; use GET.');
  });

  it('refuses a GET that sends a body with 400, without running the route', async () => {
    let ran = false;
    const url = await startRouter([['/healthz', (req, res) => ((ran = true), ok(req, res))]]);
    const refused = await new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
      const request = http.request(`${url}/healthz`, { method: 'GET', headers: { 'content-type': 'text/plain', 'content-length': '3' }, signal: AbortSignal.timeout(2000) }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
      });
      request.on('error', reject);
      request.end('x=1');
    });
    expect([refused.status, refused.body['error']]).toEqual([400, 'invalid_request']);
    expect(ran).toBe(false);
  });

  it.each([
    ['throws', (): void => {
      throw new Error('route broke');
    }],
    ['rejects', async (): Promise<void> => Promise.reject(new Error('route broke'))],
  ])('answers 500 and logs the error once when a route %s', async (_case, route) => {
    const url = await startRouter([['/broken', route]]);
    const { status, body } = await answer(`${url}/broken`);
    expect([status, body['error']]).toEqual([500, 'internal_error']);
    expect(lines.filter((line) => line['msg'] === 'unexpected error')).toHaveLength(1);
  });
});
