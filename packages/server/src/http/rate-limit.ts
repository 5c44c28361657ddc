// Request quotas per key and plan, and a failed-authentication allowance per client address, both
// counted by rate-limiter-flexible: in this process's memory, or in Redis when the deployment has
// one, so that every instance (and both listeners of each) share one count per key and address.
//
// Guarantees and limits:
// - fixed one-minute windows: a key gets at most its plan's quota in each window, so up to twice
//   that across a window boundary; a refusal says how long until the window ends (Retry-After);
// - stream connections are requests too: each attempt to open a stream takes one from the quota;
// - a Redis that fails or does not answer within REDIS_TIMEOUT_MS is replaced by counting in this
//   process's memory (per-process limits) until it answers again: limits never stall or refuse
//   requests because Redis is down;
// - a limit of 0 disables that limit.
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Plan } from '../catalog/model.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { refused } from '../metrics.ts';
import { HttpRefusal } from './errors.ts';

export interface RateLimitPolicy {
  /** Requests (and stream connection attempts) per key per minute, by plan; 0 disables. */
  perMinute: Readonly<Record<Plan, number>>;
  /** Failed authentications per client address per minute before 429s; 0 disables. */
  authFailuresPerMinute: number;
}

/** Limits that are off: a test or benchmark harness that is not about limits. */
export const NO_RATE_LIMITS: RateLimitPolicy = { perMinute: { free: 0, pro: 0 }, authFailuresPerMinute: 0 };

export interface RateLimiter {
  /**
   * Counts one request for `key` on `plan`. Returns the `RateLimit` and `RateLimit-Policy`
   * headers for the answer (null when the plan is unlimited), or rejects with a 429 refusal.
   */
  take(key: string, plan: Plan): Promise<Record<string, string>> | null;
  /** Counts a failed authentication from `address`; resolves with the 429 to send instead, once over. */
  failedAuthentication(address: string): Promise<HttpRefusal | null>;
  /**
   * Settles once counting through Redis has begun (true), or after REDIS_CONNECT_WAIT_MS without
   * it (false; memory counts until Redis answers). True at once without Redis.
   */
  connected(): Promise<boolean>;
  close(): Promise<void>;
}

const WINDOW_SECONDS = 60;
const REDIS_TIMEOUT_MS = 250;
const REDIS_CONNECT_WAIT_MS = 2_000;
const DEFAULT_KEY_PREFIX = 'catalog:ratelimit:';

export interface RateLimiterOptions {
  /** `redis://…` to share counts between instances; memory otherwise. */
  redisUrl?: string;
  keyPrefix?: string;
  logger?: Logger;
}

export function createRateLimiter(policy: RateLimitPolicy, options: RateLimiterOptions = {}): RateLimiter {
  const prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  let redis: Redis | undefined;
  if (options.redisUrl !== undefined) {
    redis = new Redis(options.redisUrl, {
      lazyConnect: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      commandTimeout: REDIS_TIMEOUT_MS,
      retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 4), 500),
    });
    redis.on('error', (error: Error) => options.logger?.debug('rate limit Redis connection error', { error: error.message }));
  }
  const limiter = (name: string, points: number): RateLimiterAbstract | null => {
    if (points <= 0) return null;
    const memory = new RateLimiterMemory({ keyPrefix: `${prefix}${name}`, points, duration: WINDOW_SECONDS });
    if (redis === undefined) return memory;
    return new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}${name}`,
      points,
      duration: WINDOW_SECONDS,
      // Once a key is over its quota, refusals are answered from memory without asking Redis.
      inMemoryBlockOnConsumed: points,
      // While Redis is not connected, count in memory at once instead of waiting for a timeout.
      rejectIfRedisNotReady: true,
      insuranceLimiter: memory,
    });
  };
  const plans = { free: limiter('free', policy.perMinute.free), pro: limiter('pro', policy.perMinute.pro) };
  const failures = limiter('auth-failures', policy.authFailuresPerMinute);

  const failureRefusal = (res: RateLimiterRes): HttpRefusal => {
    const seconds = retryAfterSeconds(res);
    return new HttpRefusal(
      'rate_limited',
      `Too many requests with a missing or unknown API key from this address; retry in ${seconds} second${seconds === 1 ? '' : 's'}.`,
      { 'retry-after': String(seconds) },
    );
  };

  return {
    take(key, plan) {
      const quota = plans[plan];
      if (quota === null) return null;
      const limit = policy.perMinute[plan];
      const headersOf = (res: RateLimiterRes): Record<string, string> => ({
        'ratelimit-policy': `"${plan}";q=${limit};w=${WINDOW_SECONDS}`,
        ratelimit: `"${plan}";r=${Math.max(0, res.remainingPoints)};t=${retryAfterSeconds(res)}`,
      });
      // Counts are stored under a digest of the key, never the key itself (Redis holds them).
      return quota.consume(createHash('sha256').update(key).digest('base64url')).then(headersOf, (rejection: unknown) => {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        refused('key');
        const seconds = retryAfterSeconds(rejection);
        throw new HttpRefusal(
          'rate_limited',
          `Rate limit of ${limit} requests per minute for the ${plan} plan exceeded; retry in ${seconds} second${seconds === 1 ? '' : 's'}.`,
          { 'retry-after': String(seconds), ...headersOf(rejection) },
        );
      });
    },
    async failedAuthentication(address) {
      if (failures === null) return null;
      try {
        await failures.consume(address);
        return null;
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) return null;
        refused('address');
        return failureRefusal(rejection);
      }
    },
    connected() {
      const client = redis;
      if (client === undefined || client.status === 'ready') return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => done(false), REDIS_CONNECT_WAIT_MS);
        const onReady = (): void => done(true);
        const done = (ok: boolean): void => {
          clearTimeout(timer);
          client.off('ready', onReady);
          resolve(ok);
        };
        client.on('ready', onReady);
      });
    },
    async close() {
      redis?.disconnect();
    },
  };
}

function retryAfterSeconds(res: RateLimiterRes): number {
  return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
}

/** The rate limiter a process of this configuration uses (each thread makes its own). */
export function rateLimiterFor(config: Config, logger: Logger): RateLimiter {
  return createRateLimiter(
    { perMinute: config.rateLimitPerMinute, authFailuresPerMinute: config.authFailuresPerMinute },
    { ...(config.rateLimitStore === 'memory' ? {} : { redisUrl: config.rateLimitStore }), logger },
  );
}
