import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../src/app.ts';
import { clientErrorHandler } from '../../src/http/client-error.ts';
import { createLogger, silentLogger } from '../../src/logger.ts';
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

  it('answers oversized headers with 431 and logs the refusal with its request id', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    server = http.createServer(createApp(testAppDeps()));
    server.on('clientError', clientErrorHandler(logger));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const response = await rawRequest(base, `GET /v2/gtin/count HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(response.status).toBe(431);
    expect(JSON.parse(response.body)).toMatchObject({ error: 'invalid_request', message: 'The request headers are too large; send at most 16 KiB of headers.' });
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'request', operation: 'unparsable', method: null, path: null, status: 431, ms: 0, request_id: response.headers['x-request-id'], parse_error: 'HPE_HEADER_OVERFLOW' }),
    ]);
  });
});

/** A socket the handler answers on: what it was sent, whether it was destroyed. */
function fakeSocket(state: { writable?: boolean; bytesRead?: number } = {}) {
  const socket = Object.assign(new EventEmitter(), {
    writable: state.writable ?? true,
    bytesRead: state.bytesRead ?? 100,
    sent: null as string | null,
    destroyed: 0,
    end(data: string) {
      socket.sent = data;
    },
    destroy() {
      socket.destroyed += 1;
    },
  });
  return socket;
}

const parseError = (code: string | undefined, message = 'Parse Error') => Object.assign(new Error(message), code === undefined ? {} : { code });

describe('clientErrorHandler on its own', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    ['a reset connection', parseError('ECONNRESET'), {}],
    ['a socket no longer writable', parseError('HPE_INVALID_METHOD'), { writable: false }],
    ['a socket that timed out before sending a byte', parseError('ERR_HTTP_REQUEST_TIMEOUT'), { bytesRead: 0 }],
  ])('closes %s without an answer', (_case, error, state) => {
    const socket = fakeSocket(state);
    clientErrorHandler(silentLogger)(error, socket as unknown as Socket);
    expect(socket.sent).toBeNull();
    expect(socket.destroyed).toBe(1);
  });

  it('answers 408 to headers that stopped arriving', () => {
    const socket = fakeSocket({ bytesRead: 10 });
    clientErrorHandler(silentLogger)(parseError('ERR_HTTP_REQUEST_TIMEOUT'), socket as unknown as Socket);
    expect(socket.sent).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    const body = JSON.parse(socket.sent!.slice(socket.sent!.indexOf('\r\n\r\n') + 4)) as { message: string };
    expect(body.message).toBe('The request headers did not arrive in time; send the whole request at once.');
  });

  it('answers 400 to a malformed request even on a socket that has read nothing', () => {
    const socket = fakeSocket({ bytesRead: 0 });
    clientErrorHandler(silentLogger)(parseError('HPE_INVALID_METHOD'), socket as unknown as Socket);
    expect(socket.sent).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
  });

  it('logs the parse error by its code, or by its message when it has none', () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const handler = clientErrorHandler(logger);
    handler(parseError('HPE_INVALID_METHOD', 'Invalid method encountered'), fakeSocket() as unknown as Socket);
    handler(parseError(undefined, 'something odd'), fakeSocket() as unknown as Socket);
    expect(lines.map((line) => [line['status'], line['parse_error']])).toEqual([
      [400, 'HPE_INVALID_METHOD'],
      [400, 'something odd'],
    ]);
  });

  it('destroys an answered socket whose peer never closes, a second after the answer', () => {
    vi.useFakeTimers();
    const socket = fakeSocket();
    clientErrorHandler(silentLogger)(parseError('HPE_INVALID_METHOD'), socket as unknown as Socket);
    vi.advanceTimersByTime(999);
    expect(socket.destroyed).toBe(0);
    vi.advanceTimersByTime(1);
    expect(socket.destroyed).toBe(1);
  });
});
