// The pipeline's deadline and its streamed answers, on the stream listener with a handler the test controls.
import http from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serveBare, type BareListener } from '../support/bare-listener.ts';
import { createAuthenticator } from '../../src/http/auth.ts';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import type { StreamWriting } from '../../src/http/exchange.ts';
import type { Handler } from '../../src/http/handler-types.ts';
import { createOperationPipeline } from '../../src/http/operation-pipeline.ts';
import { createShell } from '../../src/http/express-shell.ts';
import type { RequestHandler } from 'express';
import { createRateLimiter, NO_RATE_LIMITS } from '../../src/http/rate-limit.ts';
import { requestValidator } from '../../src/http/request-validation.ts';
import { createLogger } from '../../src/logger.ts';
import type { StreamBody } from '../../src/stream/readiness.ts';
import { FakeKeyStore } from '../support/fake-catalog-store.ts';

const PRO = 'ck_test_pro_key';
const logs: Record<string, unknown>[] = [];
/** The paths the pipeline left to the listener's shell. */
const shellPaths: string[] = [];
let served: BareListener | undefined;

afterEach(async () => {
  vi.useRealTimers();
  logs.length = 0;
  shellPaths.length = 0;
  await served?.close();
  served = undefined;
});

/** Serves the stream listener's pipeline with `streamPrices`; the shell answers what it leaves with a bare 404. */
async function servePipeline(streamPrices: Handler<'streamPrices', object>, options: { requestTimeoutMs?: number; streaming?: StreamWriting } = {}): Promise<string> {
  const rateLimiter = createRateLimiter(NO_RATE_LIMITS);
  const operations = createOperationPipeline({
    listener: 'stream',
    handlers: { streamPrices },
    services: {},
    authenticator: createAuthenticator(new FakeKeyStore({ [PRO]: 'pro' }), rateLimiter),
    rateLimiter,
    validate: requestValidator(),
    logger: createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
    requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
    ...(options.streaming === undefined ? {} : { streaming: options.streaming }),
  });
  const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  const leftOver: RequestHandler = (req, _res, next) => {
    shellPaths.push(req.url);
    next();
  };
  served = await serveBare(createShell({ listener: 'stream', logger, routes: [operations, (into) => void into.use(leftOver)], notFound: (path) => `Nothing at ${path}.` }));
  return served.url;
}

/** GET /v1/stream with node:http (no client-side timers), resolving with the status and body. */
function subscribe(base: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}/v1/stream`, { headers: { authorization: `Bearer ${PRO}`, topics: 'price:marketplacea:us' } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
  });
}

/** A stream body nobody reads here; `released` settles when its iterator is returned. */
function heldBody(): { body: StreamBody; released: Promise<'released'> } {
  let release = () => {};
  const released = new Promise<'released'>((resolve) => (release = () => resolve('released')));
  const body: StreamBody = {
    [Symbol.asyncIterator]: () => ({
      next: () => new Promise<IteratorResult<string>>(() => {}),
      return: async () => {
        release();
        return { done: true, value: undefined };
      },
    }),
  };
  return { body, released };
}

/** `released`, or 'held' if the body is still held a second later. */
const releasedSoon = (released: Promise<'released'>) => Promise.race([released, new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), 1_000))]);

const streamAnswer = (body: StreamBody) => ({ status: 200 as const, headers: { 'content-type': 'text/event-stream' }, body });

describe('createOperationPipeline', () => {
  it('is preceded by the preflight answer, and leaves other paths to the routes after it', async () => {
    const base = await servePipeline(() => streamAnswer(heldBody().body));
    const preflight = await fetch(`${base}/v1/stream`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect((await fetch(`${base}/elsewhere`)).status).toBe(404);
    expect(shellPaths).toEqual(['/elsewhere']);
  });

  it('answers 503 at the deadline, and releases unread a stream that is ready only after it', async () => {
    const { body, released } = heldBody();
    let ready = () => {};
    const late = new Promise<void>((resolve) => (ready = resolve));
    const base = await servePipeline(
      async () => {
        await late;
        return streamAnswer(body);
      },
      { requestTimeoutMs: 50 },
    );
    expect((await subscribe(base)).status).toBe(503);
    ready();
    expect(await releasedSoon(released)).toBe('released');
    expect(logs.filter((line) => line['msg'] === 'stream request').map((line) => line['status'])).toEqual([503]);
  });

  it('drops a failure that comes after the deadline: the 503 stays the only answer, nothing is logged as unexpected', async () => {
    let fail = () => {};
    const late = new Promise<void>((_resolve, reject) => (fail = () => reject(new Error('late failure'))));
    const base = await servePipeline(
      async () => {
        await late;
        throw new Error('unreachable');
      },
      { requestTimeoutMs: 50 },
    );
    expect((await subscribe(base)).status).toBe(503);
    fail();
    // The late failure reaches the pipeline's catch within this turn's microtasks.
    await new Promise((resolve) => setImmediate(resolve));
    expect(logs.filter((line) => line['level'] === 'error')).toEqual([]);
    expect(logs.filter((line) => line['msg'] === 'stream request').map((line) => line['status'])).toEqual([503]);
  });

  it('answers 500 and releases the body when the listener was given no way to write streams', async () => {
    const { body, released } = heldBody();
    const base = await servePipeline(() => streamAnswer(body));
    const answer = await subscribe(base);
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'internal_error' });
    expect(await releasedSoon(released)).toBe('released');
    expect(logs.filter((line) => line['level'] === 'error')).toEqual([
      expect.objectContaining({ msg: 'unexpected error', error: expect.objectContaining({ message: 'the stream listener cannot write the stream of streamPrices' }) }),
    ]);
  });

  it('keeps no deadline timer once a request is answered', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const base = await servePipeline(() => {
      throw new ServiceUnavailable('price log');
    });
    expect((await subscribe(base)).status).toBe(503);
    expect(vi.getTimerCount()).toBe(0);
  });
});
