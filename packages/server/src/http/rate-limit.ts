// Request quotas per key and plan, and a failed-authentication allowance per client address, both
// counted in this process's memory, or in Redis (rate-limiter-flexible's RateLimiterRedis) when the
// deployment has one, so that every instance (and both listeners of each) share one count per key
// and address.
//
// Guarantees and limits:
// - fixed windows (one minute): a key gets at most its plan's quota in each window, so up to twice
//   that across a window boundary; a refusal says how long until the window ends (Retry-After);
// - windows and Retry-After are measured on a clock the wall clock cannot move: Redis's own key
//   TTLs, or `performance.now()` in memory (`MemoryWindows`); a step of the system clock neither
//   lengthens a window nor a refusal beyond the window;
// - stream connections are requests too: each attempt to open a stream takes one from the quota;
// - Redis behind a circuit breaker (`RedisBreaker`): a command that fails or does not answer
//   within REDIS_TIMEOUT_MS is counted in memory instead; after FAILURES_TO_OPEN failures in a
//   row every count goes to memory at once (per-process limits, no wait on Redis) while a PING
//   probes Redis every PROBE_MS in the background, and counting returns to Redis once one answers.
//   Limits never stall or refuse requests because Redis is down or paused;
// - a limit of 0 disables that limit.
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Plan } from '../catalog/model.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { rateLimitStoreFallbacks, refused } from '../metrics.ts';
import { REDIS_CONNECT_TIMEOUT_MS, redisReconnectDelay } from '../redis-connection.ts';
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
const FAILURES_TO_OPEN = 3;
const PROBE_MS = 500;
const DEFAULT_KEY_PREFIX = 'catalog:ratelimit:';

export interface RateLimiterOptions {
  /** `redis://…` to share counts between instances; memory otherwise. */
  redisUrl?: string;
  keyPrefix?: string;
  logger?: Logger;
  /** The length of a window; WINDOW_SECONDS (a minute) when absent. For tests. */
  windowSeconds?: number;
}

/** One count: how many are left in the window (negative: this one is over the limit), and when the window ends. */
interface Count {
  remainingPoints: number;
  msBeforeNext: number;
}

/**
 * Fixed windows per key in this process's memory on the monotonic clock. Ended windows are
 * dropped at most once per window length, so memory holds the keys of about two windows.
 */
export class MemoryWindows {
  readonly #windows = new Map<string, { consumed: number; endsAt: number }>();
  readonly #points: number;
  readonly #windowMs: number;
  #sweepAt: number;

  constructor(points: number, windowMs: number) {
    this.#points = points;
    this.#windowMs = windowMs;
    this.#sweepAt = performance.now() + windowMs;
  }

  /** Keys held now, ended windows not yet dropped included. */
  get size(): number {
    return this.#windows.size;
  }

  consume(key: string): Count {
    const now = performance.now();
    if (now >= this.#sweepAt) {
      for (const [name, window] of this.#windows) if (window.endsAt <= now) this.#windows.delete(name);
      this.#sweepAt = now + this.#windowMs;
    }
    let window = this.#windows.get(key);
    if (window === undefined || window.endsAt <= now) {
      window = { consumed: 0, endsAt: now + this.#windowMs };
      this.#windows.set(key, window);
    }
    window.consumed += 1;
    return { remainingPoints: this.#points - window.consumed, msBeforeNext: window.endsAt - now };
  }
}

/**
 * Whether counting goes to Redis: closed (yes) until FAILURES_TO_OPEN commands in a row fail,
 * then open (memory) until a background PING answers.
 */
class RedisBreaker {
  readonly #redis: Redis;
  readonly #logger: Logger | undefined;
  #failures = 0;
  #probe: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(redis: Redis, logger: Logger | undefined) {
    this.#redis = redis;
    this.#logger = logger;
  }

  get open(): boolean {
    return this.#probe !== undefined;
  }

  succeeded(): void {
    this.#failures = 0;
  }

  failed(error: unknown): void {
    rateLimitStoreFallbacks.inc();
    this.#failures += 1;
    if (this.#failures < FAILURES_TO_OPEN || this.open || this.#closed) return;
    this.#logger?.warn('rate limit store not answering; counting in memory until it does', {
      store: 'redis',
      failures: this.#failures,
      error: (error as Error).message,
    });
    this.#schedule();
  }

  #schedule(): void {
    this.#probe = setTimeout(() => {
      this.#redis.ping().then(
        () => {
          this.#probe = undefined;
          this.#failures = 0;
          this.#logger?.info('rate limit store answering again; counting in Redis', { store: 'redis' });
        },
        () => {
          if (!this.#closed) this.#schedule();
        },
      );
    }, PROBE_MS).unref();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#probe);
  }
}

export function createRateLimiter(policy: RateLimitPolicy, options: RateLimiterOptions = {}): RateLimiter {
  const prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  const windowSeconds = options.windowSeconds ?? WINDOW_SECONDS;
  let redis: Redis | undefined;
  let breaker: RedisBreaker | undefined;
  if (options.redisUrl !== undefined) {
    redis = new Redis(options.redisUrl, {
      lazyConnect: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
      commandTimeout: REDIS_TIMEOUT_MS,
      retryStrategy: redisReconnectDelay,
    });
    redis.on('error', (error: Error) => options.logger?.debug('rate limit Redis connection error', { error: error.message }));
    breaker = new RedisBreaker(redis, options.logger);
  }
  /** Counts one for `key`: resolves with the count, refused or not; never rejects. */
  const limiter = (name: string, points: number): ((key: string) => Promise<Count>) | null => {
    if (points <= 0) return null;
    const memory = new MemoryWindows(points, windowSeconds * 1000);
    if (redis === undefined || breaker === undefined) return (key) => Promise.resolve(memory.consume(key));
    const shared = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}${name}`,
      points,
      duration: windowSeconds,
      // While Redis is not connected, fail at once (the breaker counts it) instead of waiting.
      rejectIfRedisNotReady: true,
    });
    const redisBreaker = breaker;
    return async (key) => {
      if (redisBreaker.open) return memory.consume(key);
      try {
        const res = await shared.consume(key);
        redisBreaker.succeeded();
        return res;
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          redisBreaker.succeeded();
          return { remainingPoints: -1, msBeforeNext: rejection.msBeforeNext };
        }
        redisBreaker.failed(rejection);
        return memory.consume(key);
      }
    };
  };
  const plans = { free: limiter('free', policy.perMinute.free), pro: limiter('pro', policy.perMinute.pro) };
  const failures = limiter('auth-failures', policy.authFailuresPerMinute);

  const failureRefusal = (res: Count): HttpRefusal => {
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
      const headersOf = (res: Count): Record<string, string> => ({
        'ratelimit-policy': `"${plan}";q=${limit};w=${windowSeconds}`,
        ratelimit: `"${plan}";r=${Math.max(0, res.remainingPoints)};t=${retryAfterSeconds(res)}`,
      });
      // Counts are stored under a digest of the key, never the key itself (Redis holds them).
      return quota(createHash('sha256').update(key).digest('base64url')).then((res) => {
        if (res.remainingPoints >= 0) return headersOf(res);
        refused('key');
        const seconds = retryAfterSeconds(res);
        throw new HttpRefusal(
          'rate_limited',
          `Rate limit of ${limit} requests per minute for the ${plan} plan exceeded; retry in ${seconds} second${seconds === 1 ? '' : 's'}.`,
          { 'retry-after': String(seconds), ...headersOf(res) },
        );
      });
    },
    async failedAuthentication(address) {
      if (failures === null) return null;
      const res = await failures(address);
      if (res.remainingPoints >= 0) return null;
      refused('address');
      return failureRefusal(res);
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
      breaker?.close();
      redis?.disconnect();
    },
  };
}

function retryAfterSeconds(res: Count): number {
  return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
}

/** The rate limiter a process of this configuration uses (each thread makes its own). */
export function rateLimiterFor(config: Config, logger: Logger): RateLimiter {
  return createRateLimiter(
    { perMinute: config.rateLimitPerMinute, authFailuresPerMinute: config.authFailuresPerMinute },
    { ...(config.rateLimitStore === 'memory' ? {} : { redisUrl: config.rateLimitStore }), logger },
  );
}
