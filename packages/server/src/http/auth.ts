// API key authentication and plan authorisation, the same for both listeners. Known keys are
// cached for a few seconds so the hot path skips the digest and the store; unknown keys are never
// cached, so a key created a moment ago works at once. A revoked key may keep working for at most
// KEY_CACHE_TTL_MS, measured on the monotonic clock (a step of the wall clock does not lengthen
// it). Failed authentications are counted per client address (rate-limit.ts): an address over its
// allowance gets 429 instead of 401. A key sent from such an address is still
// looked up, so a valid key is never refused for its neighbours' failures; a flood of unknown keys
// therefore costs one digest and one indexed look-up each. Requests for the same uncached key share
// one look-up: when a busy key's entry expires, the requests in flight then wait for one statement
// instead of each sending their own (on PostgreSQL, more than the pool's share per table at once
// would be refused with 503).
import type { IncomingMessage } from 'node:http';
import type { Plan } from '../catalog/model.ts';
import { operations } from '@catalog/contract';
import type { KeyStore } from '../store/key-store.ts';
import { CatalogError, ServiceUnavailable } from '../catalog/errors.ts';
import { HttpRefusal } from './errors.ts';
import type { RateLimiter } from './rate-limit.ts';

export const KEY_CACHE_TTL_MS = 5_000;
const KEY_CACHE_MAX_ENTRIES = 10_000;
const CHALLENGE = { 'www-authenticate': 'Bearer realm="catalog"' };

/** How an operation takes its key, by the contract: bare or bearer (`apiKey`), or bearer only. */
export type Credential = 'apiKey' | 'bearer';

export interface Caller {
  key: string;
  plan: Plan;
}

export interface Authenticator {
  /**
   * The caller of a request, or a 401 refusal (429 once `address` is over its failed-authentication
   * allowance; 503 when the key store cannot be asked), thrown or rejected. A cached key answers
   * synchronously, so the hot path awaits nothing for it.
   */
  authenticate(authorization: string | undefined, credential: Credential, address: string): Caller | Promise<Caller>;
}

export function createAuthenticator(keys: KeyStore, limiter: Pick<RateLimiter, 'failedAuthentication'>, now: () => number = () => performance.now()): Authenticator {
  const cache = new Map<string, { plan: Plan; until: number }>();
  const pending = new Map<string, Promise<Plan | null>>();
  const lookUp = (key: string): Promise<Plan | null> => {
    let plan = pending.get(key);
    if (plan === undefined) {
      plan = keys.findPlan(key).finally(() => pending.delete(key));
      pending.set(key, plan);
    }
    return plan;
  };
  const refuse = async (address: string, message: string): Promise<never> => {
    throw (await limiter.failedAuthentication(address)) ?? new HttpRefusal('unauthorized', message, CHALLENGE);
  };
  return {
    authenticate(authorization, credential, address) {
      const key = keyFrom(authorization, credential);
      if (key === null) return refuse(address, MISSING_KEY[credential]);
      const cached = cache.get(key);
      const time = now();
      if (cached !== undefined && cached.until > time) return { key, plan: cached.plan };
      return lookUp(key).then((plan) => {
        if (plan === null) {
          cache.delete(key);
          return refuse(address, 'The API key is not recognised; check it or create a new one.');
        }
        if (cache.size >= KEY_CACHE_MAX_ENTRIES) cache.clear();
        cache.set(key, { plan, until: time + KEY_CACHE_TTL_MS });
        return { key, plan };
      }, (error: unknown) => {
        throw error instanceof CatalogError ? error : new ServiceUnavailable('key store', { cause: error });
      });
    },
  };
}

/** Throws a 403 refusal when the caller's plan does not include the operation. */
export function authorize(operationId: keyof typeof operations, plan: Plan): void {
  const plans: readonly Plan[] = operations[operationId].plans;
  if (plans.includes(plan)) return;
  const needed = plans.join(' or ');
  throw new HttpRefusal('forbidden', `This operation needs the ${needed} plan; your key is on the ${plan} plan.`);
}

export const MISSING_KEY: Record<Credential, string> = {
  apiKey: 'Send your API key in the Authorization header, as "Authorization: <key>" or "Authorization: Bearer <key>".',
  bearer: 'Send your API key as a bearer credential: "Authorization: Bearer <key>".',
};

/**
 * The key of an `Authorization` header; null when absent, malformed, or (for `bearer`
 * operations, which the contract secures with the Bearer scheme only) not a bearer credential.
 */
export function keyFrom(authorization: string | undefined, credential: Credential): string | null {
  if (authorization === undefined) return null;
  let value = authorization.trim();
  const bearer = value.length > 7 && value.slice(0, 7).toLowerCase() === 'bearer ';
  if (bearer) value = value.slice(7).trim();
  else if (credential === 'bearer') return null;
  return value === '' || value.length > 512 || /\s/.test(value) ? null : value;
}

/**
 * The address failed authentications are counted against: the peer of the socket. Behind a proxy
 * every client shares the proxy's address, so let the proxy limit failed authentication itself.
 */
export function clientAddress(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}
