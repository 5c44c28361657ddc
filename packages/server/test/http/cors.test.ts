import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from './harness.ts';

describe('cross-origin access', () => {
  let app: RunningApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('answers a preflight with 204 and the headers a browser client sends, without a key', async () => {
    app = await startApp();
    const response = await fetch(`${app.base}/v2/brands`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-headers')).toContain('Authorization');
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, HEAD');
  });

  it('answers a preflight through the one writer: X-Request-Id and one access line', async () => {
    app = await startApp();
    const response = await fetch(`${app.base}/docs`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'GET', 'x-request-id': 'preflight-1' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('x-request-id')).toBe('preflight-1');
    expect(app.logs.filter((line) => line['request_id'] === 'preflight-1')).toMatchObject([{ msg: 'request', operation: 'preflight', method: 'OPTIONS', status: 204 }]);
  });

  it('lets a browser read responses and their request id, refusals included', async () => {
    app = await startApp();
    for (const key of [undefined, null]) {
      const headers = { origin: 'https://shop.example.com' };
      const response = await app.get('/v2/brands', key === null ? { key: null, headers } : { headers });
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
    }
  });

  it('answers a GET that carries Access-Control-Request-Method as a GET, not as a preflight', async () => {
    app = await startApp();
    const response = await app.get('/v2/brands', { headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'GET' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-methods')).toBeNull();
  });

  it('still refuses a plain OPTIONS request with 405', async () => {
    app = await startApp();
    const response = await fetch(`${app.base}/v2/brands`, { method: 'OPTIONS' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});
