// RedisPriceLog: the price log on ONE global Redis stream, shared by every service instance and
// every `prices publish` process pointed at the same Redis and key prefix.
//
// Guarantees
// - Ids are integers, strictly increasing and contiguous inside the stream, assigned atomically by
//   one Lua script that reads the stream's top id and XADDs `<n>-0` for each event of a batch: two
//   processes appending at once never interleave inside a batch nor reuse an id.
// - Ids are never reused, also when Redis loses the stream (a restart without persistence, a
//   failover to a stale replica, FLUSHDB): a NEW or emptied log (no stream and no counter key)
//   starts its counter at Redis' TIME in milliseconds × 1000, so its first id is above every id an
//   earlier log could have issued (unless that log averaged more than 1,000 events per millisecond
//   of its life, or Redis' clock went back). Ids have 16 digits, within Last-Event-ID's limit and
//   2^53. A log that lost its data therefore shows up as a jump: a resume point below the new
//   oldest id gets a `reset`, and the hub ends live streams on such a jump (see stream/hub.ts).
// - The stream is trimmed with `MAXLEN ~ 5000`: at least the newest RETAINED_EVENTS entries remain
//   (approximate trimming never goes below the threshold). Reads never return an event older than
//   the newest RETAINED_EVENTS, even when Redis still stores it.
// - The same append script HSETs each event into its product's hash (`<prefix>latest:<product_id>`,
//   field `variant_id|source|market`, value `<id> <topic> <data>`; never trimmed), and
//   latestPrices() reads that hash and the stream's top id in one script: both are atomic, so a
//   snapshot and its position always agree. FLUSHDB or a restart without persistence loses the
//   hashes with the stream; the snapshot then holds only what was published since.
// - Events appended without the hashes (by a version before them, during a rolling deploy too) are
//   backfilled on open (connect()) from every event the stream still holds after
//   `<prefix>latest-through`, the newest id backfilled so far: a script writes a batch's hash
//   fields only where the field is absent or holds an older id, and advances that mark in the same
//   step, so a backfill is atomic per batch, idempotent, safe beside appends and other instances,
//   and never replaces a later event by an earlier one. A Redis unreachable at open backfills once
//   it is back.
// - append() resolves after Redis acknowledged the XADDs (durable as far as Redis' persistence
//   settings make it).
//
// Failure modes
// - Redis unreachable: append/readAfter/bounds/ping reject with ServiceUnavailable within about
//   the command timeout (no offline queue, no retries). An append that times out may
//   still have been applied by Redis: a retry can store the events twice under new ids.
// - follow() does not fail because of Redis (unless `followGiveUpAfterMs` is set): it retries with
//   exponential backoff capped at 1 s on its own connection and resumes after the last id it
//   yielded, so a subscriber loses nothing the stream still retains. It blocks with XREAD on a dedicated connection: use one follow() per process
//   (the fan-out hub), not one per subscriber.
// - Redis Cluster: the append script touches two keys, so the prefix must carry a hash tag
//   (`{catalog}:prices:`) to keep them in one slot.
import { Redis, type RedisOptions } from 'ioredis';
import { ServiceUnavailable } from '../../catalog/errors.ts';
import type { PriceEvent } from '../../catalog/model.ts';
import type { Logger } from '../../logger.ts';
import { REDIS_CONNECT_TIMEOUT_MS, redisReconnectDelay } from '../../redis-connection.ts';
import { latestPricesJson, RETAINED_EVENTS, toAppendRecord, type LatestPrices, type LatestPricesQuery, type PriceLog, type StoredPriceEvent } from '../price-log.ts';

export interface RedisPriceLogOptions {
  /** Prefix of the two keys used (`<prefix>stream`, `<prefix>floor`, the counter); tests use their own. */
  keyPrefix?: string;
  /** Milliseconds before a command to an unresponsive Redis fails. */
  commandTimeoutMs?: number;
  /**
   * When set, follow() throws ServiceUnavailable once Redis has been unreachable this long, so a
   * caller can end its streams; by default it retries forever and resumes where it stopped.
   */
  followGiveUpAfterMs?: number;
  /**
   * The counter a new or emptied log starts at (its first id is this + 1). By default Redis'
   * TIME in ms × 1000; tests pin it to count from 1.
   */
  newLogCounter?: number;
}

export const DEFAULT_KEY_PREFIX = 'catalog:prices:';

const WHAT = 'price log (Redis)';
const FOLLOW_BLOCK_MS = 5000;
const FOLLOW_BATCH = 1000;
const MAX_BACKOFF_MS = 1000;

// KEYS: stream, counter, then the latest-price hash of each event (or the counter again for an
// event without product and variant ids). ARGV: retained, newLogCounter ('' for Redis' TIME),
// then topic/data/field triples (field '' for no latest price). Returns the ids as strings. Next id = 1 + max(stream top id, counter key); when both are
// gone (a new log, or one Redis lost), the counter starts from the clock so no id is reused.
const APPEND_SCRIPT = `
local function topOf(stream)
  local top = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)
  if top[1] then return tonumber(string.match(top[1][1], '^(%d+)')) end
  return 0
end
local last = topOf(KEYS[1])
local counter = redis.call('GET', KEYS[2])
if counter then
  counter = tonumber(counter)
  if counter > last then last = counter end
elseif last == 0 then
  if ARGV[2] ~= '' then
    last = tonumber(ARGV[2])
  else
    local now = redis.call('TIME')
    last = tonumber(now[1]) * 1000000 + math.floor(tonumber(now[2]) / 1000) * 1000
  end
end
local ids = {}
for i = 3, #ARGV, 3 do
  last = last + 1
  local id = string.format('%.0f', last)
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], id .. '-0', 't', ARGV[i], 'd', ARGV[i + 1])
  if ARGV[i + 2] ~= '' then
    redis.call('HSET', KEYS[2 + #ids + 1], ARGV[i + 2], id .. ' ' .. ARGV[i] .. ' ' .. ARGV[i + 1])
  end
  ids[#ids + 1] = id
end
redis.call('SET', KEYS[2], string.format('%.0f', last))
return ids
`;

// KEYS: stream. ARGV: retained, afterId, limit. Returns { oldest, newest, entries } where oldest is
// the oldest REPLAYABLE id (0 when empty) and entries are XRANGE rows above afterId in the window.
const READ_SCRIPT = `
local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)
if not first[1] then return { '0', '0', {} } end
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local newest = tonumber(string.match(top[1][1], '^(%d+)'))
local oldest = tonumber(string.match(first[1][1], '^(%d+)'))
local windowStart = newest - tonumber(ARGV[1]) + 1
if windowStart > oldest then oldest = windowStart end
local limit = tonumber(ARGV[3])
local entries = {}
if limit > 0 then
  local from = tonumber(ARGV[2]) + 1
  if from < oldest then from = oldest end
  if from <= newest then
    entries = redis.call('XRANGE', KEYS[1], string.format('%.0f', from) .. '-0', '+', 'COUNT', limit)
  end
end
return { string.format('%.0f', oldest), string.format('%.0f', newest), entries }
`;

// KEYS: the backfill mark, then the latest-price hash of each event. ARGV: the newest id of the
// batch, then field/id/value triples. Writes a field only where it is absent or older; keeps the
// mark at the highest id backfilled. Returns the fields written.
const BACKFILL_SCRIPT = `
local written = 0
for i = 2, #KEYS do
  local at = (i - 2) * 3 + 2
  local id = tonumber(ARGV[at + 1])
  local current = redis.call('HGET', KEYS[i], ARGV[at])
  if not current or tonumber(string.match(current, '^(%d+)')) < id then
    redis.call('HSET', KEYS[i], ARGV[at], ARGV[at + 2])
    written = written + 1
  end
end
local mark = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > mark then redis.call('SET', KEYS[1], ARGV[1]) end
return written
`;

const BACKFILL_BATCH = 1000;

// KEYS: the product's latest-price hash, stream. Returns { newest id, hash values }.
const LATEST_SCRIPT = `
local top = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
local newest = '0'
if top[1] then newest = string.match(top[1][1], '^(%d+)') end
return { newest, redis.call('HVALS', KEYS[1]) }
`;

type StreamEntry = [id: string, fields: string[]];

interface ScriptedRedis extends Redis {
  priceLogAppend(keyCount: number, ...keysAndArgs: string[]): Promise<string[]>;
  priceLogLatest(hash: string, stream: string): Promise<[string, string[]]>;
  priceLogBackfill(keyCount: number, ...keysAndArgs: string[]): Promise<number>;
  priceLogRead(stream: string, retained: string, afterId: string, limit: string): Promise<[string, string, StreamEntry[]]>;
}

function withScripts(client: Redis): ScriptedRedis {
  // Without numberOfKeys: the first argument is the number of keys (one per event after two).
  client.defineCommand('priceLogAppend', { lua: APPEND_SCRIPT });
  client.defineCommand('priceLogLatest', { numberOfKeys: 2, lua: LATEST_SCRIPT });
  client.defineCommand('priceLogBackfill', { lua: BACKFILL_SCRIPT });
  client.defineCommand('priceLogRead', { numberOfKeys: 1, lua: READ_SCRIPT });
  return client as ScriptedRedis;
}

function fromEntry([id, fields]: StreamEntry): StoredPriceEvent {
  let topic = '';
  let data = '';
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === 't') topic = fields[i + 1] ?? '';
    else if (fields[i] === 'd') data = fields[i + 1] ?? '';
  }
  return { id: Number(id.slice(0, id.indexOf('-'))), topic, data };
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function clientOptions(commandTimeoutMs: number): RedisOptions {
  return {
    lazyConnect: true,
    // Fail fast instead of queueing: nothing waits for a reconnect, and a command in flight when
    // the connection drops is failed, not silently re-sent later.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: commandTimeoutMs,
    // Commands fail fast while it reconnects (no offline queue).
    retryStrategy: redisReconnectDelay,
  };
}

export class RedisPriceLog implements PriceLog {
  readonly #url: string;
  readonly #client: ScriptedRedis;
  readonly #logger: Logger;
  readonly #streamKey: string;
  readonly #floorKey: string;
  readonly #latestPrefix: string;
  readonly #backfilledKey: string;
  readonly #commandTimeoutMs: number;
  readonly #followGiveUpAfterMs: number;
  readonly #followers = new Set<Redis>();
  readonly #newLogCounter: string;
  #closed = false;

  constructor(url: string, logger: Logger, options: RedisPriceLogOptions = {}) {
    const prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.#url = url;
    this.#logger = logger;
    this.#streamKey = `${prefix}stream`;
    this.#floorKey = `${prefix}floor`;
    this.#latestPrefix = `${prefix}latest:`;
    this.#backfilledKey = `${prefix}latest-through`;
    this.#commandTimeoutMs = options.commandTimeoutMs ?? 2000;
    this.#followGiveUpAfterMs = options.followGiveUpAfterMs ?? Number.POSITIVE_INFINITY;
    this.#newLogCounter = options.newLogCounter === undefined ? '' : String(Math.max(0, Math.trunc(options.newLogCounter)));
    this.#client = withScripts(new Redis(url, clientOptions(this.#commandTimeoutMs)));
    this.#client.on('error', (error: Error) => this.#logger.debug('price log Redis connection error', { error: error.message }));
  }

  /**
   * Connects once and backfills the latest prices; a Redis that is down now is not fatal (the
   * client keeps reconnecting, and backfills once it is ready).
   */
  async connect(): Promise<void> {
    const backfill = (): Promise<void> =>
      this.#backfillLatest().catch((error: unknown) => {
        // Tried again at the next (re)connection.
        this.#logger.warn('price log latest-price backfill failed', { error: (error as Error).message });
        this.#client.once('ready', () => void backfill());
      });
    try {
      await this.#client.connect();
    } catch (error) {
      this.#logger.warn('price log Redis is unreachable; retrying in the background', { error: (error as Error).message });
      this.#client.once('ready', () => void backfill());
      return;
    }
    await backfill();
  }

  /** Writes the latest-price hashes of every stored event after the backfill mark (see the header). */
  async #backfillLatest(): Promise<void> {
    let after = Number((await this.#client.get(this.#backfilledKey)) ?? 0);
    let written = 0;
    for (;;) {
      const entries = (await this.#client.xrange(this.#streamKey, `${after + 1}-0`, '+', 'COUNT', BACKFILL_BATCH)) as StreamEntry[];
      if (entries.length === 0) break;
      const keys = [this.#backfilledKey];
      const args: string[] = [];
      for (const entry of entries) {
        const event = fromEntry(entry);
        after = event.id;
        let latest;
        try {
          latest = toAppendRecord(event.data).latest;
        } catch {
          continue;
        }
        if (latest === null) continue;
        keys.push(this.#latestPrefix + latest.productId);
        args.push(latest.key, String(event.id), `${event.id} ${event.topic} ${event.data}`);
      }
      written += await this.#client.priceLogBackfill(keys.length, ...keys, String(after), ...args);
      if (entries.length < BACKFILL_BATCH) break;
    }
    if (written > 0) this.#logger.info('latest prices backfilled from the stream', { fields: written, through: after });
  }

  async append(events: readonly PriceEvent[] | readonly string[]): Promise<StoredPriceEvent[]> {
    const stored = events.map((event) => toAppendRecord(event));
    if (stored.length === 0) return [];
    const keys = [this.#streamKey, this.#floorKey];
    const args = [String(RETAINED_EVENTS), this.#newLogCounter];
    for (const { topic, data, latest } of stored) {
      keys.push(latest === null ? this.#floorKey : this.#latestPrefix + latest.productId);
      args.push(topic, data, latest?.key ?? '');
    }
    const ids = await this.#call(() => this.#client.priceLogAppend(keys.length, ...keys, ...args));
    return stored.map(({ topic, data }, index) => ({ id: Number(ids[index]), topic, data }));
  }

  async latestPrices(productId: string, query: LatestPricesQuery = {}): Promise<LatestPrices> {
    const [newest, values] = await this.#call(() => this.#client.priceLogLatest(this.#latestPrefix + productId, this.#streamKey));
    const events = values.map((value) => {
      const idEnd = value.indexOf(' ');
      const topicEnd = value.indexOf(' ', idEnd + 1);
      return { id: Number(value.slice(0, idEnd)), topic: value.slice(idEnd + 1, topicEnd), data: value.slice(topicEnd + 1) };
    });
    return { data: latestPricesJson(events.sort((a, b) => a.id - b.id), query), position: Number(newest) };
  }

  async readAfter(afterId: number, limit: number): Promise<StoredPriceEvent[]> {
    const [, , entries] = await this.#call(() => this.#read(this.#client, afterId, limit));
    return entries.map(fromEntry);
  }

  async bounds(): Promise<{ oldestId: number; newestId: number } | null> {
    const [oldest, newest] = await this.#call(() => this.#read(this.#client, 0, 0));
    const newestId = Number(newest);
    if (newestId === 0) return null;
    return { oldestId: Number(oldest), newestId };
  }

  async *follow(afterId: number, signal: AbortSignal): AsyncIterable<StoredPriceEvent> {
    const connection = withScripts(new Redis(this.#url, { ...clientOptions(FOLLOW_BLOCK_MS + 5000), commandTimeout: FOLLOW_BLOCK_MS + 5000 }));
    connection.on('error', () => {});
    this.#followers.add(connection);
    const onAbort = (): void => connection.disconnect();
    signal.addEventListener('abort', onAbort, { once: true });
    let last = afterId;
    let catchUp = true;
    let failures = 0;
    let outageSince = 0;
    try {
      while (!signal.aborted && !this.#closed) {
        try {
          if (connection.status === 'wait') await connection.connect();
          let batch: StoredPriceEvent[];
          if (catchUp) {
            // The script clamps to the retained window, so a follower far behind never sees an
            // event older than the newest RETAINED_EVENTS.
            const [, , entries] = await this.#read(connection, last, FOLLOW_BATCH);
            batch = entries.map(fromEntry);
            catchUp = batch.length === FOLLOW_BATCH;
          } else {
            const result = (await connection.xread('COUNT', FOLLOW_BATCH, 'BLOCK', FOLLOW_BLOCK_MS, 'STREAMS', this.#streamKey, `${last}-0`)) as
              | [string, StreamEntry[]][]
              | null;
            batch = (result?.[0]?.[1] ?? []).map(fromEntry);
            // A full batch may mean the reader fell behind: go through the window-clamped path.
            catchUp = batch.length === FOLLOW_BATCH;
          }
          if (failures > 0) this.#logger.info('price log follow resumed', { afterId: last });
          failures = 0;
          outageSince = 0;
          for (const event of batch) {
            if (event.id <= last) continue;
            last = event.id;
            yield event;
            if (signal.aborted) return;
          }
        } catch (error) {
          if (signal.aborted || this.#closed) return;
          if (failures === 0) this.#logger.warn('price log follow lost Redis; retrying', { afterId: last, error: (error as Error).message });
          failures += 1;
          outageSince ||= performance.now();
          if (performance.now() - outageSince >= this.#followGiveUpAfterMs) throw new ServiceUnavailable(WHAT, { cause: error });
          catchUp = true;
          await abortableSleep(Math.min(50 * 2 ** Math.min(failures, 5), MAX_BACKOFF_MS), signal);
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#followers.delete(connection);
      connection.disconnect();
    }
  }

  async ping(): Promise<void> {
    await this.#call(() => this.#client.ping());
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const follower of this.#followers) follower.disconnect();
    this.#followers.clear();
    try {
      await this.#client.quit();
    } catch {
      this.#client.disconnect();
    }
  }

  #read(client: ScriptedRedis, afterId: number, limit: number): Promise<[string, string, StreamEntry[]]> {
    return client.priceLogRead(this.#streamKey, String(RETAINED_EVENTS), String(Math.max(0, Math.floor(afterId))), String(limit));
  }

  async #call<T>(command: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new ServiceUnavailable(WHAT, { cause: new Error('closed') });
    try {
      return await command();
    } catch (error) {
      throw new ServiceUnavailable(WHAT, { cause: error });
    }
  }
}

export async function openRedisPriceLog(url: string, logger: Logger, options: RedisPriceLogOptions = {}): Promise<PriceLog> {
  const log = new RedisPriceLog(url, logger.child({ component: 'redis-price-log' }), options);
  await log.connect();
  return log;
}
