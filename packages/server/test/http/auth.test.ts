import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { operations, type ApiOperationId } from '@catalog/contract';
import type { IncomingMessage } from 'node:http';
import { clientAddress, createAuthenticator, KEY_CACHE_TTL_MS, MISSING_KEY } from '../../src/http/auth.ts';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import { HttpRefusal } from '../../src/http/errors.ts';
import { operationsOf } from '../../src/http/operation-routes.ts';
import { FakeKeyStore } from '../support/fake-catalog-store.ts';
import { buildCatalogProduct } from '@catalog/contract/testing';
import { expectMatchesSpec } from '../support/spec-validator.ts';
import { FREE_KEY, PRO_KEY, startApp, type RunningApp } from './harness.ts';

const product = buildCatalogProduct({ slug: 'nike-dunk-low' });
/** A value for each path parameter of the contract, by name, that finds `product`. */
const PATH_VALUES: Record<string, string> = { id: product.slug, brand: product.brand };
const pathOf = (operationId: ApiOperationId): string =>
  operations[operationId].pathParameters.reduce<string>((path, name) => {
    const value = PATH_VALUES[name];
    if (value === undefined) throw new Error(`${operationId} has the path parameter {${name}}: add a value for it to PATH_VALUES in packages/server/test/http/auth.test.ts`);
    return path.replace(`{${name}}`, encodeURIComponent(value));
  }, operations[operationId].path);

describe.each(operationsOf('api'))('%s', (operationId) => {
  let app: RunningApp;
  const path = pathOf(operationId);
  const plans: readonly string[] = operations[operationId].plans;

  beforeEach(async () => {
    app = await startApp();
    app.store.catalog.push(product);
  });
  afterEach(() => app.close());

  it('returns 401 with a Bearer challenge when no key is sent', async () => {
    const response = await app.get(path, { key: null });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="catalog"');
    const body = (await response.json()) as { error: string; message: string };
    expectMatchesSpec(operationId, 401, body);
    expect(body.error).toBe('unauthorized');
    expect(body.message).toContain('Authorization');
  });

  it.each(['ck_unknown', 'Bearer ck_unknown', 'Bearer', 'Basic dXNlcjpwYXNz'])('returns 401 for the credential "%s"', async (credential) => {
    const response = await app.get(path, { key: credential });
    expect(response.status).toBe(401);
    expectMatchesSpec(operationId, 401, await response.json());
  });

  it('answers a pro key', async () => {
    const response = await app.get(path, { key: `Bearer ${PRO_KEY}` });
    expect(response.status).toBe(200);
    expectMatchesSpec(operationId, 200, await response.json());
  });

  if (plans.includes('free')) {
    it('answers a free key', async () => {
      const response = await app.get(path, { key: FREE_KEY });
      expect(response.status).toBe(200);
      expectMatchesSpec(operationId, 200, await response.json());
    });
  } else {
    it('returns 403 naming the plan needed when the key is on the free plan', async () => {
      const response = await app.get(path, { key: FREE_KEY });
      expect(response.status).toBe(403);
      const body = (await response.json()) as { error: string; message: string };
      expectMatchesSpec(operationId, 403, body);
      expect(body).toMatchObject({ error: 'forbidden', message: 'This operation needs the pro plan; your key is on the free plan.' });
    });
  }
});

describe('API key look-up', () => {
  let app: RunningApp;
  beforeEach(async () => {
    app = await startApp();
  });
  afterEach(() => app.close());

  it('accepts a key created after a failed attempt with it, at once', async () => {
    expect((await app.get('/gtin/count', { key: 'ck_created_1' })).status).toBe(401);
    const key = await app.keys.createKey('free');
    expect(key).toBe('ck_created_1');
    expect((await app.get('/gtin/count', { key })).status).toBe(200);
  });

  it('caches a known key instead of looking it up on every request', async () => {
    for (let i = 0; i < 5; i++) expect((await app.get('/gtin/count', { key: PRO_KEY })).status).toBe(200);
    expect(app.keys.lookups).toBe(1);
  });
});

describe('key revocation', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    ['back an hour', -3_600_000],
    ['back 30 seconds', -30_000],
  ])('refuses a revoked key within the key cache lifetime when the wall clock steps %s', async (_step, stepMs) => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const keys = new FakeKeyStore({ ck_revoked: 'pro' });
    const authenticator = createAuthenticator(keys, { failedAuthentication: async () => null });
    expect(await authenticator.authenticate('ck_revoked', 'apiKey', '10.0.0.1')).toMatchObject({ plan: 'pro' });
    keys.plans.delete('ck_revoked');
    vi.setSystemTime(Date.now() + stepMs);
    vi.advanceTimersByTime(KEY_CACHE_TTL_MS);
    await expect(Promise.resolve().then(() => authenticator.authenticate('ck_revoked', 'apiKey', '10.0.0.1'))).rejects.toBeInstanceOf(HttpRefusal);
  });
});

describe('key look-ups', () => {
  it('sends one look-up for the requests that arrive together with a key not in the cache, and a new one once it has answered', async () => {
    const keys = new FakeKeyStore({ ck_busy: 'pro' });
    const authenticator = createAuthenticator(keys, { failedAuthentication: async () => null });
    const callers = await Promise.all(Array.from({ length: 50 }, () => authenticator.authenticate('ck_busy', 'apiKey', '10.0.0.1')));
    expect(callers.every((caller) => caller.plan === 'pro')).toBe(true);
    expect(keys.lookups).toBe(1);
    const unknown = await Promise.allSettled(Array.from({ length: 3 }, () => authenticator.authenticate('ck_unknown', 'apiKey', '10.0.0.1')));
    expect(unknown.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(keys.lookups).toBe(2);
    // An unknown key is never cached: created a moment later, it works at once.
    keys.plans.set('ck_unknown', 'free');
    expect(await authenticator.authenticate('ck_unknown', 'apiKey', '10.0.0.1')).toMatchObject({ plan: 'free' });
    expect(keys.lookups).toBe(3);
  });
});

describe('the Authorization header', () => {
  const refusalOf = async (authorization: string, credential: 'apiKey' | 'bearer' = 'apiKey') => {
    const keys = new FakeKeyStore({ ck_pro: 'pro', ['k'.repeat(512)]: 'pro', ['k'.repeat(513)]: 'pro', 'ck a': 'pro', 'Stryker was here!': 'pro', '': 'pro' });
    const authenticator = createAuthenticator(keys, { failedAuthentication: async () => null });
    const outcome = await Promise.resolve()
      .then(() => authenticator.authenticate(authorization, credential, '10.0.0.1'))
      .then((caller) => caller.plan, (error: unknown) => (error instanceof HttpRefusal ? error.message : error));
    return { outcome, lookups: keys.lookups };
  };

  it.each([
    ['  ck_pro  ', 'apiKey'],
    ['Bearer ck_pro', 'apiKey'],
    ['bearer   ck_pro ', 'bearer'],
    [`Bearer ${'k'.repeat(512)}`, 'bearer'],
  ] as const)('takes the key of case %#', async (authorization, credential) => {
    expect(await refusalOf(authorization, credential)).toEqual({ outcome: 'pro', lookups: 1 });
  });

  it.each([
    ['', 'apiKey'],
    ['   ', 'apiKey'],
    ['ck a', 'apiKey'],
    ['Bearer ck a', 'bearer'],
    ['k'.repeat(513), 'apiKey'],
    ['ck_pro', 'bearer'],
  ] as const)('refuses case %# as a missing key, without a look-up', async (authorization, credential) => {
    expect(await refusalOf(authorization, credential)).toEqual({ outcome: MISSING_KEY[credential], lookups: 0 });
  });
});

describe('the key cache', () => {
  const KEYS = 10_000;
  const many = () => {
    const entries: Record<string, 'pro'> = {};
    for (let i = 0; i <= KEYS + 1; i++) entries[`ck_${i}`] = 'pro';
    return new FakeKeyStore(entries);
  };
  const authenticateAll = async (authenticator: ReturnType<typeof createAuthenticator>, keys: string[]) => {
    for (const key of keys) await authenticator.authenticate(key, 'apiKey', '10.0.0.1');
  };
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `ck_${from + i}`);

  it('keeps every key of a full cache, then starts over with the next new key', async () => {
    const keys = many();
    const authenticator = createAuthenticator(keys, { failedAuthentication: async () => null });
    await authenticateAll(authenticator, range(0, KEYS));
    await authenticateAll(authenticator, ['ck_0', `ck_${KEYS - 1}`]);
    expect(keys.lookups).toBe(KEYS);
    await authenticateAll(authenticator, [`ck_${KEYS}`, `ck_${KEYS}`, 'ck_0']);
    expect(keys.lookups).toBe(KEYS + 2);
  });

  it('does not count a revoked key that expired against the cache size', async () => {
    let time = 0;
    const keys = many();
    const authenticator = createAuthenticator(keys, { failedAuthentication: async () => null }, () => time);
    await authenticateAll(authenticator, ['ck_revoked']).catch(() => undefined);
    keys.plans.set('ck_revoked', 'pro');
    await authenticateAll(authenticator, ['ck_revoked']);
    keys.plans.delete('ck_revoked');
    time += KEY_CACHE_TTL_MS;
    await expect(Promise.resolve().then(() => authenticator.authenticate('ck_revoked', 'apiKey', '10.0.0.1'))).rejects.toBeInstanceOf(HttpRefusal);
    const before = keys.lookups;
    await authenticateAll(authenticator, range(0, KEYS));
    await authenticateAll(authenticator, ['ck_0']);
    expect(keys.lookups - before).toBe(KEYS);
  });

  it('caches several keys at once', async () => {
    const keys = new FakeKeyStore({ ck_a: 'pro', ck_b: 'free' });
    const authenticator = createAuthenticator(keys, { failedAuthentication: async () => null });
    for (let i = 0; i < 3; i++) await authenticateAll(authenticator, ['ck_a', 'ck_b']);
    expect(keys.lookups).toBe(2);
  });
});

describe('a key store that fails', () => {
  it('answers 503 naming the key store, with the failure as its cause', async () => {
    const failure = new Error('connection refused');
    const keys = new FakeKeyStore();
    keys.findPlan = async () => {
      throw failure;
    };
    const authenticator = createAuthenticator(keys, { failedAuthentication: async () => null });
    const error = await Promise.resolve()
      .then(() => authenticator.authenticate('ck_any', 'apiKey', '10.0.0.1'))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServiceUnavailable);
    expect(error).toMatchObject({ message: 'The key store is unavailable; retry shortly.', cause: failure });
  });
});

describe('clientAddress', () => {
  it('is the peer address of the socket, or "unknown" once the socket has lost it', () => {
    expect(clientAddress({ socket: { remoteAddress: '10.1.2.3' } } as unknown as IncomingMessage)).toBe('10.1.2.3');
    expect(clientAddress({ socket: {} } as unknown as IncomingMessage)).toBe('unknown');
  });
});
