// API key authentication and plan authorisation. Known keys are cached for a few seconds so the
// hot path skips the digest and the store; unknown keys are never cached, so a key created a
// moment ago works at once. A revoked key may keep working for at most KEY_CACHE_TTL_MS.
import type { Plan } from '../catalog/model.ts';
import { operations, type ApiOperationId } from '../generated/handlers.gen.ts';
import type { KeyStore } from '../store/key-store.ts';
import { HttpRefusal } from './errors.ts';

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
   * The caller of a request, or a 401 refusal (thrown or rejected). A cached key answers
   * synchronously, so the hot path awaits nothing for it.
   */
  authenticate(authorization: string | undefined, credential: Credential): Caller | Promise<Caller>;
}

export function createAuthenticator(keys: KeyStore, now: () => number = Date.now): Authenticator {
  const cache = new Map<string, { plan: Plan; until: number }>();
  return {
    authenticate(authorization, credential) {
      const key = keyFrom(authorization, credential);
      if (key === null) throw new HttpRefusal('unauthorized', MISSING_KEY[credential], CHALLENGE);
      const cached = cache.get(key);
      const time = now();
      if (cached !== undefined && cached.until > time) return { key, plan: cached.plan };
      return keys.findPlan(key).then((plan) => {
        if (plan === null) {
          cache.delete(key);
          throw new HttpRefusal('unauthorized', 'The API key is not recognised; check it or create a new one.', CHALLENGE);
        }
        if (cache.size >= KEY_CACHE_MAX_ENTRIES) cache.clear();
        cache.set(key, { plan, until: time + KEY_CACHE_TTL_MS });
        return { key, plan };
      });
    },
  };
}

/** Throws a 403 refusal when the caller's plan does not include the operation. */
export function authorize(operationId: ApiOperationId, plan: Plan): void {
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
