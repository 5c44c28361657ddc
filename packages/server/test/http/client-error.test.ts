import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { clientErrorHandler } from '../../src/http/client-error.ts';
import { silentLogger } from '../../src/logger.ts';
import { testAppDeps } from '../support/app-deps.ts';
import { expectErrorBody } from '../support/spec-validator.ts';
import { rawRequest } from './harness.ts';

describe('clientErrorHandler', () => {
  let server: http.Server;
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('answers a request the HTTP parser rejects with the error body', async () => {
    server = http.createServer(createApp(testAppDeps()));
    server.on('clientError', clientErrorHandler(silentLogger));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const response = await rawRequest(base, 'GET /v2/products/a b c HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(response.status).toBe(400);
    expect(response.headers['x-request-id']).toBeTruthy();
    const body = JSON.parse(response.body) as { error: string };
    expectErrorBody(body);
    expect(body.error).toBe('invalid_request');
  });
});
