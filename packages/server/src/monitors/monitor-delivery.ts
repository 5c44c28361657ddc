// The price monitors' delivery, started by `catalog serve` (main.ts) on every instance:
//
//   price log ──readAfter──► reader round: each enabled monitor's filter and threshold against its
//                            baselines (price-changes.ts) ──advance──► outbox (monitor-store.ts)
//   outbox ──claimDue──► signed POST (webhook-sender.ts) ──recordAttempt──► delivered | retried | disabled
//
// Guarantees: at least once and in log order per monitor (the store forms a monitor's next
// delivery only once the previous one was delivered, and keeps each delivery's id and body for
// its retries); nothing is lost across restarts (positions, baselines and deliveries are in the
// catalog database; a claim whose instance died is taken again when its lease ends); with several
// instances each change is stored once (advance() writes only from the position it read) and each
// attempt is made by one instance (claims). A monitor's log position follows the stream's reset
// rule: when the events after it are gone (the log lost its data, or pruned them while the monitor
// was behind by more than the retained 5,000), it resumes at the oldest event left, and its next
// delivery says `reset: true`; changes are still measured against the last delivered prices.
// A new monitor starts at the newest event when an instance first reads for it.
// Limits: a round reads at most READ_PAGE events (more rounds follow at once); at most
// MAX_IN_FLIGHT attempts at a time per instance, `endpointConcurrency` per endpoint.
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../logger.ts';
import { monitorMetrics } from '../metrics.ts';
import { resumePoint, type PriceLog } from '../prices/price-log.ts';
import type { EventFilter } from '../stream/event-filter.ts';
import { generateMessageId, priceChangedBody } from './monitor.ts';
import type { DueDelivery, MonitorReaderState, MonitorStore } from './monitor-store.ts';
import { compileMonitorFilter, priceChangesOf } from './price-changes.ts';
import { nextAttemptAt, retryAfterMs } from './retry-schedule.ts';
import type { AttemptResult, WebhookAttempt } from './webhook-sender.ts';

const READ_PAGE = 1000;
const MAX_IN_FLIGHT = 64;
const DEFAULT_POLL_MS = 250;

export interface MonitorDeliveryOptions {
  store: MonitorStore;
  log: Pick<PriceLog, 'bounds' | 'readAfter'>;
  sender: { send(attempt: WebhookAttempt): Promise<AttemptResult> };
  logger: Logger;
  retryScheduleMs: readonly number[];
  timeoutMs: number;
  /** How often the log and the outbox are looked at when idle. */
  pollMs?: number;
}

export class MonitorDelivery {
  readonly #options: MonitorDeliveryOptions;
  readonly #logger: Logger;
  readonly #stopped = new AbortController();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #filters = new Map<string, EventFilter | null>();
  #loops: Promise<void>[] = [];

  constructor(options: MonitorDeliveryOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'monitors' });
  }

  start(): void {
    monitorMetrics.totals(() => this.#options.store.deliveryTotals());
    this.#loops = [this.#loop('read the price log', () => this.#readRound()), this.#loop('deliver', () => this.#deliverRound())];
  }

  /** Stops reading and claiming, and waits for the attempts under way (each bounded by the timeout). */
  async stop(): Promise<void> {
    this.#stopped.abort();
    await Promise.all(this.#loops);
    await Promise.all(this.#inFlight);
    monitorMetrics.totals(null);
  }

  /** Runs `round` until stopped: again at once when it says there is more, else after the poll interval. */
  async #loop(what: string, round: () => Promise<boolean>): Promise<void> {
    const signal = this.#stopped.signal;
    let failing = false;
    while (!signal.aborted) {
      let more = false;
      try {
        more = await round();
        if (failing) this.#logger.info(`monitors: ${what} works again`);
        failing = false;
      } catch (error) {
        if (!failing) this.#logger.warn(`monitors: could not ${what}; trying again`, { error });
        failing = true;
      }
      if (!more && !signal.aborted) await sleep(this.#options.pollMs ?? DEFAULT_POLL_MS, signal);
    }
  }

  /** One page of the log for every enabled monitor; true when a full page was read. */
  async #readRound(): Promise<boolean> {
    const { store, log } = this.#options;
    const states = await store.readerStates();
    if (states.length === 0) return false;
    const bounds = await log.bounds();
    const newest = bounds?.newestId ?? 0;
    const reading: { state: MonitorReaderState; cursor: number; reset: boolean }[] = [];
    for (const state of states) {
      if (state.position === null) {
        await store.advance({ id: state.id, from: null, to: newest, baselines: state.baselines, changes: [], reset: false });
      } else if (state.position === 0) {
        // The log was empty when the monitor was made: every event is new to it, none lost.
        reading.push({ state, cursor: 0, reset: false });
      } else {
        const { cursor, resetOldestId } = resumePoint(state.position, bounds);
        reading.push({ state, cursor, reset: resetOldestId !== null });
      }
    }
    // Nothing published since every position, and nothing lost: no page to read.
    if (reading.every(({ cursor, reset }) => !reset && cursor >= newest)) return false;
    const from = Math.min(...reading.map((entry) => entry.cursor));
    const page = await log.readAfter(from, READ_PAGE);
    const end = page.at(-1)?.id ?? from;
    for (const { state, cursor, reset } of reading) {
      const to = Math.max(cursor, end);
      if (to === state.position && !reset) continue;
      const events = page.filter((event) => event.id > cursor);
      const { changes, baselines } = priceChangesOf(events, this.#filterOf(state.filter), state.minChangePercent, state.baselines);
      const stored = await store.advance({ id: state.id, from: state.position, to, baselines, changes, reset });
      if (reset && stored) this.#logger.warn('monitor resumed after lost price events', { monitor: state.id, position: state.position, resumed_at: cursor });
    }
    return page.length === READ_PAGE;
  }

  #filterOf(text: string): EventFilter | null {
    let filter = this.#filters.get(text);
    if (filter === undefined) {
      if (this.#filters.size >= 10_000) this.#filters.clear();
      filter = compileMonitorFilter(text);
      this.#filters.set(text, filter);
    }
    return filter;
  }

  /** Claims what is due and starts its attempts; true when it claimed as many as it could take. */
  async #deliverRound(): Promise<boolean> {
    const room = MAX_IN_FLIGHT - this.#inFlight.size;
    if (room <= 0) return false;
    const now = Date.now();
    // A claim outlives the attempt's timeout, so a live instance's attempt is never taken over.
    const leaseMs = this.#options.timeoutMs * 2 + 5_000;
    const due = await this.#options.store.claimDue(now, room, leaseMs, (monitorId, changes, reset, at) => ({
      messageId: generateMessageId(),
      body: priceChangedBody(monitorId, changes, reset, at),
    }));
    for (const delivery of due) {
      const attempt = this.#attempt(delivery).catch((error: unknown) => this.#logger.error('monitor delivery attempt not recorded; retried when its claim ends', { monitor: delivery.monitorId, webhook_id: delivery.messageId, error }));
      this.#inFlight.add(attempt);
      void attempt.finally(() => this.#inFlight.delete(attempt));
    }
    return due.length === room;
  }

  async #attempt(delivery: DueDelivery): Promise<void> {
    const at = Date.now();
    const result = await this.#options.sender.send({ url: delivery.url, secret: delivery.secret, messageId: delivery.messageId, body: delivery.body, at });
    const done = Date.now();
    const fields = { monitor: delivery.monitorId, webhook_id: delivery.messageId, attempt: delivery.attempts + 1, ms: done - at };
    const { store } = this.#options;
    switch (result.outcome) {
      case 'delivered':
        await store.recordAttempt(delivery, { result: 'delivered', at: done });
        monitorMetrics.attempt('delivered');
        this.#logger.info('monitor delivery delivered', { ...fields, status: result.status });
        return;
      case 'gone': {
        const reason = 'the endpoint answered 410 Gone';
        await store.recordAttempt(delivery, { result: 'disabled', at: done, reason });
        monitorMetrics.attempt('gone');
        this.#logger.warn('monitor disabled: its endpoint answered 410 Gone', fields);
        return;
      }
      case 'failed': {
        const retryAt = nextAttemptAt(this.#options.retryScheduleMs, delivery.attempts + 1, done, retryAfterMs(result.retryAfter, done));
        if (retryAt === null) {
          const hours = Math.round(((done - delivery.firstDueAt) / 3_600_000) * 10) / 10;
          const reason = `every attempt failed for ${hours} h (${delivery.attempts + 1} attempts), the last: ${result.reason}`;
          await store.recordAttempt(delivery, { result: 'disabled', at: done, reason });
          monitorMetrics.attempt('exhausted');
          this.#logger.warn('monitor disabled: its retry schedule is spent', { ...fields, reason: result.reason });
          return;
        }
        await store.recordAttempt(delivery, { result: 'failed', at: done, reason: result.reason, retryAt });
        monitorMetrics.attempt('failed');
        this.#logger.info('monitor delivery failed; retried later', { ...fields, reason: result.reason, retry_in_ms: retryAt - done });
        return;
      }
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => undefined);
}
