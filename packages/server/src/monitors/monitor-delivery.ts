// The price monitors' delivery, started by `catalog serve` on every instance, in a thread of its
// own (monitor-thread.ts):
//
//   price log ──readAfter──► reader round: each enabled monitor's filter and threshold against its
//                            baselines (price-changes.ts) ──advance──► outbox (monitor-store.ts)
//   outbox ──claimDue──► signed POST (webhook-sender.ts) ──recordAttempts──► delivered | retried | disabled
//   advance, recordAttempts ──the deliveries they form, claimed──► signed POST
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
// A round reads one page of the log for every monitor at once: each event is parsed once and
// reaches the monitors whose filter names one of its ids by look-up (stream/filtered-subscribers.ts),
// and the round's positions, the baselines its changes set and the changes are stored by advance()
// in slices of SLICE monitors, the thread's event loop free between them. The reader keeps its monitors'
// positions and baselines in memory between rounds and reads the list of monitors every STATES_MS
// (and after advance() refused one: another instance moved it, or it stopped). The reader wakes
// when the log has new events (its follow()); both also poll. A delivery formed by advance() or
// recordAttempts() (the next one of a monitor whose delivery was delivered) is claimed in that
// write and sent at once while there is room for attempts; claimDue takes the rest, retries whose
// time has come and claims whose instance died, woken when a write left deliveries unclaimed.
// Outcomes of attempts are recorded together, at most one write every RECORD_SPACING_MS, those
// that ended while the previous record was being written in the next one.
// Limits: a round reads at most READ_PAGE events (more rounds follow at once); at most
// MAX_IN_FLIGHT attempts being sent at a time per instance, `endpointConcurrency` per endpoint; an
// attempt's slot is free once its answer is in, while its outcome waits to be recorded; none
// starts while the reader is a full page behind (#readerCaughtUp).
import { setImmediate as yieldToIo, setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../logger.ts';
import { monitorMetrics } from '../metrics.ts';
import { resumePoint, type PriceLog } from '../prices/price-log.ts';
import { FilteredSubscribers } from '../stream/filtered-subscribers.ts';
import { generateMessageId, priceChangedBody } from './monitor.ts';
import type { AttemptRecord, Claim, ComposeDelivery, DeliveryOutcome, DueDelivery, MonitorAdvance, MonitorReaderState, MonitorStore } from './monitor-store.ts';
import { compileMonitorFilter, parsePriceEvent, priceChangesOf, type Baselines, type ParsedPriceEvent } from './price-changes.ts';
import { nextAttemptAt, retryAfterMs } from './retry-schedule.ts';
import type { AttemptResult, WebhookAttempt } from './webhook-sender.ts';
import type { EventFilter } from '../stream/event-filter.ts';

const READ_PAGE = 2000;
/**
 * Monitors per advance() (one transaction) and filters compiled between two turns of the monitor
 * thread's event loop: the sender's answers are taken between the slices.
 */
const SLICE = 1000;
const MAX_IN_FLIGHT = 256;
const DEFAULT_POLL_MS = 250;
/** The first wait after a failed round; it doubles with each failure in a row, up to the poll interval. */
const FIRST_RETRY_MS = 10;
/** The least time from one reader round to the next when it is woken (a round costs about the same for one event as for many). */
const READ_SPACING_MS = 100;
/** How often claimDue looks for deliveries to form beyond those formed as they became due (a minimum interval is whole seconds). */
const FORM_ALL_MS = 1_000;
/** How long the outcomes of attempts are tried to be stored before those attempts count as unrecorded. */
const RECORD_RETRY_MS = 5_000;
/**
 * The least time from one write of outcomes to the next: the outcomes that end meanwhile share a
 * transaction (and a commit), at the cost of this long more before a monitor's next delivery.
 */
const RECORD_SPACING_MS = 10;
/** How long a monitor that no event changed may keep its stored position (see #readRound). */
const IDLE_WRITE_MS = 2_000;
/**
 * How often the reader reads the enabled monitors again (new, removed, disabled, revoked). In
 * between it keeps their positions and baselines in memory; advance() refuses a monitor that has
 * stopped, so nothing is stored for it meanwhile.
 */
const STATES_MS = 1_000;
/** The baselines kept in memory at most, over every monitor; beyond, those of monitors a round does not reach are dropped and read again when needed. */
const MAX_BASELINE_ENTRIES = 1_000_000;

/** What the reader keeps of an enabled monitor between rounds; in its filter index, every topic, as its filter decides. */
interface ReaderMonitor {
  readonly topics: null;
  readonly id: string;
  readonly filter: EventFilter | null;
  readonly minChangePercent: number;
  /** The position in the store, as this reader last read or wrote it (advance()'s `from`); null until first read for. */
  stored: number | null;
  /** How far this reader has read for it: ahead of `stored` when no event since changed anything for it. */
  read: number | null;
  /** The stored baselines and those written since; null until an event reaches it (read then). */
  baselines: Baselines | null;
}

/** A loop's sleep that another part of the delivery can end early. */
class Wakeable {
  #wake: (() => void) | null = null;
  #woken = false;

  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** Resolves after `ms`, when woken (at once if it was woken since the last sleep), or when `signal` aborts. */
  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (this.#woken) {
      this.#woken = false;
      return;
    }
    if (signal.aborted) return;
    // A timer and a callback rather than an aborted delay(): a wake costs no AbortError.
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.#wake = done;
    });
    this.#woken = false;
  }
}

export interface MonitorDeliveryOptions {
  store: MonitorStore;
  log: Pick<PriceLog, 'bounds' | 'readAfter' | 'follow'>;
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
  /** Attempts being sent. */
  readonly #inFlight = new Set<Promise<void>>();
  /** Attempts whose outcome is not yet recorded. */
  readonly #unrecorded = new Set<Promise<void>>();
  readonly #monitors = new Map<string, ReaderMonitor>();
  readonly #filters = new FilteredSubscribers<ReaderMonitor>();
  /** When the monitors were last read from the store; stale: read them again next round. */
  #statesReadAt = 0;
  #statesStale = true;
  /** Baselines held in memory, over every monitor. */
  #baselineEntries = 0;
  readonly #reader = new Wakeable();
  readonly #sender = new Wakeable();
  #recording: AttemptRecord[] = [];
  #recorded: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  #recordingUnderWay = false;
  /** A write claimed as many deliveries as it could: more may be due for claimDue. */
  #unclaimed = false;
  #recordStartedAt = 0;
  /** The reader's last round read a full page: it is behind, and no attempt starts until it has caught up. */
  #readerBehind = false;
  #idleWrittenAt = 0;
  #formedAllAt = 0;
  readonly #compose: ComposeDelivery = (monitorId, changes, reset, at) => ({ messageId: generateMessageId(), body: priceChangedBody(monitorId, changes, reset, at) });
  #loops: Promise<void>[] = [];

  constructor(options: MonitorDeliveryOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'monitors' });
  }

  start(): void {
    monitorMetrics.totals(() => this.#options.store.deliveryTotals());
    this.#loops = [
      this.#loop('read the price log', this.#reader, () => this.#readRound(), READ_SPACING_MS),
      this.#loop('deliver', this.#sender, () => this.#deliverRound(), 0),
      this.#followLog(),
    ];
  }

  /** Wakes the reader whenever the log has new events; the reader's poll covers a log that cannot follow. */
  async #followLog(): Promise<void> {
    const signal = this.#stopped.signal;
    while (!signal.aborted) {
      try {
        const after = (await this.#options.log.bounds())?.newestId ?? 0;
        for await (const _event of this.#options.log.follow(after, signal)) this.#reader.wake();
      } catch {
        // The reader's own rounds report a log that does not answer.
      }
      await sleep(this.#options.pollMs ?? DEFAULT_POLL_MS, signal);
    }
  }

  /** Stops reading and claiming, and waits for the attempts under way (each bounded by the timeout). */
  async stop(): Promise<void> {
    this.#stopped.abort();
    await Promise.all(this.#loops);
    await Promise.all(this.#inFlight);
    await Promise.all(this.#unrecorded);
    monitorMetrics.totals(null);
  }

  /** Runs `round` until stopped: again at once when it says there is more, else when woken or after the poll interval. */
  async #loop(what: string, wakeable: Wakeable, round: () => Promise<boolean>, spacingMs: number): Promise<void> {
    const signal = this.#stopped.signal;
    const pollMs = this.#options.pollMs ?? DEFAULT_POLL_MS;
    let failures = 0;
    while (!signal.aborted) {
      let more: boolean;
      const startedAt = Date.now();
      try {
        more = await round();
        if (failures > 0) this.#logger.info(`monitors: ${what} works again`);
        failures = 0;
      } catch (error) {
        if (failures === 0) this.#logger.warn(`monitors: could not ${what}; trying again`, { error });
        failures += 1;
        // A store busy for a moment (another process's write) is tried again soon, a longer outage at the poll interval.
        await sleep(Math.min(pollMs, FIRST_RETRY_MS * 2 ** (failures - 1)), signal);
        continue;
      }
      if (more || signal.aborted) continue;
      await wakeable.sleep(pollMs, signal);
      const early = startedAt + Math.min(spacingMs, pollMs) - Date.now();
      if (early > 0) await sleep(early, signal);
    }
  }

  /** One page of the log for every enabled monitor; true when a full page was read. */
  async #readRound(): Promise<boolean> {
    const { store, log } = this.#options;
    const startedAt = Date.now();
    if (this.#statesStale || startedAt - this.#statesReadAt >= STATES_MS) {
      await this.#refresh(await store.readerStates());
      this.#statesReadAt = startedAt;
      this.#statesStale = false;
    }
    if (this.#monitors.size === 0) return false;
    const bounds = await log.bounds();
    const newest = bounds?.newestId ?? 0;
    const starting: ReaderMonitor[] = [];
    const reading = new Map<string, { monitor: ReaderMonitor; cursor: number; reset: boolean; events: ParsedPriceEvent[] }>();
    for (const monitor of this.#monitors.values()) {
      if (monitor.stored === null || monitor.read === null) starting.push(monitor);
      else if (monitor.read === 0) {
        // The log was empty when the monitor was made: every event is new to it, none lost.
        reading.set(monitor.id, { monitor, cursor: 0, reset: false, events: [] });
      } else {
        const { cursor, resetOldestId } = resumePoint(monitor.read, bounds);
        reading.set(monitor.id, { monitor, cursor, reset: resetOldestId !== null, events: [] });
      }
    }
    const { stored: startedAll } = await store.advance(
      starting.map((monitor) => ({ id: monitor.id, from: null, to: newest, baselines: null, changes: [], reset: false })),
      Date.now(),
      this.#compose,
    );
    starting.forEach((monitor, n) => this.#settle(monitor, startedAll[n] === true, newest));
    // Nothing published since every position, and nothing lost: no page to read.
    let from = Number.POSITIVE_INFINITY;
    let behind = false;
    for (const { cursor, reset } of reading.values()) {
      from = Math.min(from, cursor);
      behind ||= reset || cursor < newest;
    }
    if (!behind) return this.#readerCaughtUp(false);
    const page = await log.readAfter(from, READ_PAGE);
    const end = page.at(-1)?.id ?? from;
    const full = page.length === READ_PAGE;
    this.#readerBehind ||= full;
    for (const event of page) {
      let parsed: ParsedPriceEvent | null = null;
      this.#filters.forEachMatch(event, (monitor) => {
        const entry = reading.get(monitor.id);
        if (entry !== undefined && event.id > entry.cursor) entry.events.push((parsed ??= parsePriceEvent(event)));
      });
    }
    await this.#loadBaselines([...reading.values()].filter((entry) => entry.events.length > 0).map((entry) => entry.monitor));
    // A monitor that no event changed keeps its stored position until the page is full or
    // IDLE_WRITE_MS have passed: the reader moves on in memory, and a round writes the monitors
    // with changes instead of every monitor. A restart reads those events again, to the same
    // effect (no change).
    const now = Date.now();
    const writeIdle = full || now - this.#idleWrittenAt >= IDLE_WRITE_MS;
    const updates: MonitorAdvance[] = [];
    const written: ReaderMonitor[] = [];
    for (const { monitor, cursor, reset, events } of reading.values()) {
      const to = Math.max(cursor, end);
      const read = events.length === 0 || monitor.baselines === null ? null : priceChangesOf(events, monitor.filter, monitor.minChangePercent, monitor.baselines);
      if (read !== null && read.changes.length > 0) {
        updates.push({ id: monitor.id, from: monitor.stored, to, baselines: read.baselines, changes: read.changes, reset });
        written.push(monitor);
      } else if (reset || (writeIdle && to !== monitor.stored)) {
        updates.push({ id: monitor.id, from: monitor.stored, to, baselines: null, changes: [], reset });
        written.push(monitor);
      } else monitor.read = to;
    }
    await inSlices(updates, async (slice, at) => {
      const claim = this.#claim();
      const { stored, claimed } = await store.advance(slice, Date.now(), this.#compose, claim);
      this.#startAll(claimed, claim, false);
      slice.forEach((update, n) => {
        const monitor = written[at + n]!;
        this.#settle(monitor, stored[n] === true, update.to, update.baselines, update.changes.length === 0 && !update.reset);
        if (stored[n] === true && update.reset) this.#logger.warn('monitor resumed after lost price events', { monitor: update.id, position: update.from, resumed_at: reading.get(update.id)?.cursor });
      });
    });
    if (writeIdle) this.#idleWrittenAt = now;
    return this.#readerCaughtUp(full);
  }

  /**
   * Reading comes first: events the log prunes before the reader reaches them are lost to the
   * monitors (a reset), while a delivery waiting in the outbox is only late. So from a round that
   * reads a full page (the reader is READ_PAGE events or more behind) until one that does not, the
   * sender starts no attempt (those under way finish), leaving the thread and the store to the
   * reader; the changes wait and leave in bigger batches. Even a few attempts in flight took enough
   * of the thread on SQLite for the reader to lose events at the figures. Returns `full`.
   */
  #readerCaughtUp(full: boolean): boolean {
    if (!full && this.#readerBehind) {
      this.#readerBehind = false;
      this.#sender.wake();
    }
    return full;
  }

  /**
   * After advance(): a monitor written moves on with the baselines its changes set; one that was
   * not (another instance moved it, or it stopped) is read again from the store next round.
   */
  #settle(monitor: ReaderMonitor, stored: boolean, to: number, baselines: Baselines | null = null, positionOnly = false): void {
    if (!stored && positionOnly) {
      // A position alone may be left out only because another transaction held the monitor: read
      // on in memory, write it later. Had it moved or stopped, the next write that matters is
      // refused, or the next reading of the monitors shows it.
      monitor.read = to;
      return;
    }
    if (!stored) {
      this.#unindex(monitor);
      this.#statesStale = true;
      return;
    }
    monitor.stored = monitor.read = to;
    if (baselines === null || monitor.baselines === null) return;
    for (const [key, price] of Object.entries(baselines)) {
      if (monitor.baselines[key] === undefined) this.#baselineEntries += 1;
      monitor.baselines[key] = price;
    }
  }

  /** Reads the stored baselines of those of `monitors` whose baselines are not in memory. */
  async #loadBaselines(monitors: readonly ReaderMonitor[]): Promise<void> {
    if (this.#baselineEntries > MAX_BASELINE_ENTRIES) {
      // Over the budget: keep only those this round needs.
      const needed = new Set(monitors);
      for (const monitor of this.#monitors.values()) if (!needed.has(monitor)) this.#dropBaselines(monitor);
    }
    const missing = monitors.filter((monitor) => monitor.baselines === null);
    await inSlices(missing, async (slice) => {
      const read = await this.#options.store.baselinesOf(slice.map((monitor) => monitor.id));
      for (const monitor of slice) {
        const baselines = read.get(monitor.id);
        // Gone since the monitors were read: priceChangesOf is not run for it (baselines stay null).
        if (baselines === undefined) continue;
        monitor.baselines = baselines;
        this.#baselineEntries += Object.keys(baselines).length;
      }
    });
  }

  #dropBaselines(monitor: ReaderMonitor): void {
    if (monitor.baselines === null) return;
    this.#baselineEntries -= Object.keys(monitor.baselines).length;
    monitor.baselines = null;
  }

  /**
   * Keeps the reader's monitors to the enabled ones the store lists: a new monitor's filter read
   * and compiled once; one whose stored position is not the one the reader last wrote (another
   * instance moved it) read afresh; gone ones dropped.
   */
  async #refresh(states: readonly MonitorReaderState[]): Promise<void> {
    const current = new Set<string>();
    const unknown: MonitorReaderState[] = [];
    for (const state of states) {
      current.add(state.id);
      const known = this.#monitors.get(state.id);
      if (known === undefined) unknown.push(state);
      else if (known.stored !== state.position) {
        known.stored = known.read = state.position;
        this.#dropBaselines(known);
      }
    }
    for (const monitor of this.#monitors.values()) if (!current.has(monitor.id)) this.#unindex(monitor);
    await inSlices(unknown, async (slice) => {
      const filters = await this.#options.store.filtersOf(slice.map((state) => state.id));
      for (const state of slice) {
        const text = filters.get(state.id);
        if (text === undefined) continue;
        const monitor: ReaderMonitor = {
          topics: null,
          id: state.id,
          filter: compileMonitorFilter(text),
          minChangePercent: state.minChangePercent,
          stored: state.position,
          read: state.position,
          baselines: null,
        };
        this.#monitors.set(monitor.id, monitor);
        if (monitor.filter !== null) this.#filters.add(monitor, monitor.filter);
      }
    });
  }

  #unindex(monitor: ReaderMonitor): void {
    this.#dropBaselines(monitor);
    this.#monitors.delete(monitor.id);
    this.#filters.delete(monitor);
  }

  /**
   * What a write may claim of the deliveries it forms: the room left for attempts (none once
   * stopping). A claim outlives the attempt's timeout, so a live instance's attempt is never taken over.
   */
  #claim(): Claim {
    const room = this.#stopped.signal.aborted || this.#readerBehind ? 0 : Math.max(0, MAX_IN_FLIGHT - this.#inFlight.size);
    return { limit: room, leaseMs: this.#options.timeoutMs * 2 + 5_000 };
  }

  /** Claims what is due and starts its attempts; true when it claimed as many as it could take. */
  async #deliverRound(): Promise<boolean> {
    const claim = this.#claim();
    if (claim.limit <= 0) return false;
    const now = Date.now();
    // Every delivery is formed as it becomes due but one whose minimum interval has since passed: those are looked for every FORM_ALL_MS.
    const formAll = now - this.#formedAllAt >= FORM_ALL_MS;
    const due = await this.#options.store.claimDue(now, claim.limit, claim.leaseMs, this.#compose, formAll);
    if (formAll) this.#formedAllAt = now;
    this.#startAll(due, claim, true);
    return due.length === claim.limit;
  }

  /**
   * Starts the attempts of deliveries claimed within `claim`. When it was used up, more may be due,
   * for the sender to claim once there is room; when not, and the write claimed whatever was due
   * (`claimedDue`), nothing is left for it but what comes due later (the poll).
   */
  #startAll(claimed: readonly DueDelivery[], claim: Claim, claimedDue: boolean): void {
    for (const delivery of claimed) this.#start(delivery);
    if (claimed.length >= claim.limit) {
      this.#unclaimed = true;
      this.#sender.wake();
    } else if (claimedDue) this.#unclaimed = false;
  }

  #start(delivery: DueDelivery): void {
    let answered!: () => void;
    const sending = new Promise<void>((resolve) => (answered = resolve));
    const attempt = this.#attempt(delivery, () => answered()).catch((error: unknown) =>
      this.#logger.error('monitor delivery attempt not recorded; retried when its claim ends', { monitor: delivery.monitorId, webhook_id: delivery.messageId, error }),
    );
    this.#inFlight.add(sending);
    this.#unrecorded.add(attempt);
    void sending.then(() => {
      this.#inFlight.delete(sending);
      // Room for attempts at deliveries left due, claimed together once half the room is free.
      if (this.#unclaimed && this.#inFlight.size <= MAX_IN_FLIGHT / 2) this.#sender.wake();
    });
    void attempt.finally(() => {
      answered();
      this.#unrecorded.delete(attempt);
    });
  }

  /** Stores an attempt's outcome with the others that end meanwhile (one recordAttempts); resolves once stored. */
  #record(delivery: DueDelivery, outcome: DeliveryOutcome): Promise<void> {
    const stored = new Promise<void>((resolve, reject) => this.#recorded.push({ resolve, reject }));
    this.#recording.push({ delivery, outcome });
    if (!this.#recordingUnderWay) void this.#flushRecords();
    return stored;
  }

  /**
   * Writes the waiting outcomes, in batches, until none is left. A refused write (SQLite: another
   * process is writing; PostgreSQL: an outage) is tried again with the outcomes that arrived since,
   * for up to RECORD_RETRY_MS; then those attempts are reported unrecorded and sent again once their
   * claims end.
   */
  async #flushRecords(): Promise<void> {
    this.#recordingUnderWay = true;
    let records: AttemptRecord[] = [];
    let waiting: { resolve: () => void; reject: (error: unknown) => void }[] = [];
    let failingSince: number | null = null;
    let failures = 0;
    while (this.#recording.length > 0 || records.length > 0) {
      const early = this.#recordStartedAt + RECORD_SPACING_MS - Date.now();
      if (early > 0 && !this.#stopped.signal.aborted) await delay(early);
      this.#recordStartedAt = Date.now();
      records = records.concat(this.#recording);
      waiting = waiting.concat(this.#recorded);
      this.#recording = [];
      this.#recorded = [];
      try {
        const claim = this.#claim();
        const next = await this.#options.store.recordAttempts(records, Date.now(), this.#compose, claim);
        for (const { resolve } of waiting) resolve();
        // The next deliveries of the monitors whose delivery was delivered, and others due.
        this.#startAll(next, claim, true);
      } catch (error) {
        failingSince ??= Date.now();
        failures += 1;
        if (Date.now() - failingSince < RECORD_RETRY_MS && !this.#stopped.signal.aborted) {
          await delay(Math.min(DEFAULT_POLL_MS, FIRST_RETRY_MS * 2 ** (failures - 1)));
          continue;
        }
        for (const { reject } of waiting) reject(error);
      }
      records = [];
      waiting = [];
      failingSince = null;
      failures = 0;
    }
    this.#recordingUnderWay = false;
  }

  /** Sends one attempt, calls `answered` once its answer is in, and records its outcome. */
  async #attempt(delivery: DueDelivery, answered: () => void): Promise<void> {
    const at = Date.now();
    const result = await this.#options.sender.send({ url: delivery.url, secret: delivery.secret, messageId: delivery.messageId, body: delivery.body, at });
    answered();
    const done = Date.now();
    const fields = { monitor: delivery.monitorId, webhook_id: delivery.messageId, attempt: delivery.attempts + 1, ms: done - at };
    switch (result.outcome) {
      case 'delivered':
        await this.#record(delivery, { result: 'delivered', at: done });
        monitorMetrics.attempt('delivered');
        this.#logger.info('monitor delivery delivered', { ...fields, status: result.status });
        return;
      case 'gone': {
        const reason = 'the endpoint answered 410 Gone';
        await this.#record(delivery, { result: 'disabled', at: done, reason });
        monitorMetrics.attempt('gone');
        this.#logger.warn('monitor disabled: its endpoint answered 410 Gone', fields);
        return;
      }
      case 'failed': {
        const retryAt = nextAttemptAt(this.#options.retryScheduleMs, delivery.attempts + 1, done, retryAfterMs(result.retryAfter, done));
        if (retryAt === null) {
          const hours = Math.round(((done - delivery.firstDueAt) / 3_600_000) * 10) / 10;
          const reason = `every attempt failed for ${hours} h (${delivery.attempts + 1} attempts), the last: ${result.reason}`;
          await this.#record(delivery, { result: 'disabled', at: done, reason });
          monitorMetrics.attempt('exhausted');
          this.#logger.warn('monitor disabled: its retry schedule is spent', { ...fields, reason: result.reason });
          return;
        }
        await this.#record(delivery, { result: 'failed', at: done, reason: result.reason, retryAt });
        monitorMetrics.attempt('failed');
        this.#logger.info('monitor delivery failed; retried later', { ...fields, reason: result.reason, retry_in_ms: retryAt - done });
        return;
      }
    }
  }
}

/** Runs `work` on `items` SLICE at a time (`at`: the slice's first index), the thread's event loop free between slices. */
async function inSlices<T>(items: readonly T[], work: (slice: readonly T[], at: number) => Promise<void>): Promise<void> {
  for (let at = 0; at < items.length; at += SLICE) {
    if (at > 0) await yieldToIo();
    await work(items.slice(at, at + SLICE), at);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => undefined);
}
