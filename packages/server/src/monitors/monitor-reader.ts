// The price monitors' log reader, started by `catalog serve` on every instance in a thread of its
// own (monitor-thread.ts), beside the sender (monitor-sender.ts):
//
//   price log ──readAfter──► reader round: each enabled monitor's filter and threshold against its
//                            baselines (price-changes.ts) ──advance──► outbox (monitor-store.ts)
//                            ──DeliveryLink.formed──► the sender claims what is due
//
// Guarantees (with the sender's, monitor-sender.ts): at least once and in log order per monitor
// (the store forms a monitor's next delivery only once the previous one was delivered); nothing
// is lost across restarts (positions, baselines and changes are in the catalog database); with
// several instances each change is stored once (advance() writes only from the position it read).
// A monitor's log position follows the stream's reset rule: when the events after it are gone
// (the log lost its data, or pruned them while the monitor was behind by more than the retained
// 5,000), it resumes at the oldest event left, and its next delivery says `reset: true`; changes
// are still measured against the last delivered prices. A new monitor starts at the newest event
// when an instance first reads for it.
// A round reads one page of the log for every monitor at once: each event is parsed once and
// reaches the monitors whose filter names one of its ids by look-up (stream/filtered-subscribers.ts),
// and the round's positions, the baselines its changes set and the changes are stored by advance()
// in slices of SLICE monitors, the thread's event loop free between them. The reader keeps its
// monitors' positions and baselines in memory between rounds and reads the list of monitors every
// STATES_MS (and after advance() refused one: another instance moved it, or it stopped). It wakes
// when the log has new events (its follow()), and also polls.
// Limits: a round reads at most READ_PAGE events (more rounds follow at once). Reading comes first:
// events the log prunes before the reader reaches them are lost to the monitors (a reset), while a
// delivery waiting in the outbox is only late; so from a round that reads a full page until one
// that does not, the link says the reader is behind and the sender starts no attempt (those under
// way finish), leaving the store's write lock and the machine's cores to the reader.
import type { Logger } from '../logger.ts';
import { resumePoint, type PriceLog } from '../prices/price-log.ts';
import { FilteredSubscribers } from '../stream/filtered-subscribers.ts';
import type { EventFilter } from '../stream/event-filter.ts';
import { DEFAULT_POLL_MS, inSlices, runLoop, sleep, Wakeable, type DeliveryLink } from './delivery-loop.ts';
import { composeDelivery } from './monitor.ts';
import type { MonitorAdvance, MonitorReaderState, MonitorStore } from './monitor-store.ts';
import { compileMonitorFilter, parsePriceEvent, priceChangesOf, type Baselines, type ParsedPriceEvent } from './price-changes.ts';

const READ_PAGE = 2000;
/** The least time from one reader round to the next when it is woken (a round costs about the same for one event as for many). */
const READ_SPACING_MS = 100;
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

export interface MonitorReaderOptions {
  store: MonitorStore;
  log: Pick<PriceLog, 'bounds' | 'readAfter' | 'follow'>;
  /** Where the reader says it formed deliveries, and whether it is behind. */
  link: DeliveryLink;
  logger: Logger;
  /** How often the log is looked at when idle. */
  pollMs?: number;
}

export class MonitorReader {
  readonly #options: MonitorReaderOptions;
  readonly #logger: Logger;
  readonly #stopped = new AbortController();
  readonly #monitors = new Map<string, ReaderMonitor>();
  readonly #filters = new FilteredSubscribers<ReaderMonitor>();
  /** When the monitors were last read from the store; stale: read them again next round. */
  #statesReadAt = 0;
  #statesStale = true;
  /** Baselines held in memory, over every monitor. */
  #baselineEntries = 0;
  readonly #wakeable = new Wakeable();
  #idleWrittenAt = 0;
  #loops: Promise<void>[] = [];

  constructor(options: MonitorReaderOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'monitors' });
  }

  start(): void {
    const signal = this.#stopped.signal;
    const pollMs = this.#options.pollMs ?? DEFAULT_POLL_MS;
    this.#loops = [
      runLoop('read the price log', () => this.#readRound(), { wakeable: this.#wakeable, signal, logger: this.#logger, pollMs, spacingMs: READ_SPACING_MS }),
      this.#followLog(),
    ];
  }

  /** Stops reading; resolves once the round under way has ended. */
  async stop(): Promise<void> {
    this.#stopped.abort();
    await Promise.all(this.#loops);
    this.#options.link.setBehind(false);
  }

  /** Wakes the reader whenever the log has new events; the reader's poll covers a log that cannot follow. */
  async #followLog(): Promise<void> {
    const signal = this.#stopped.signal;
    while (!signal.aborted) {
      try {
        const after = (await this.#options.log.bounds())?.newestId ?? 0;
        for await (const _event of this.#options.log.follow(after, signal)) this.#wakeable.wake();
      } catch {
        // The reader's own rounds report a log that does not answer.
      }
      await sleep(this.#options.pollMs ?? DEFAULT_POLL_MS, signal);
    }
  }

  /** One page of the log for every enabled monitor; true when a full page was read. */
  async #readRound(): Promise<boolean> {
    const { store, log, link } = this.#options;
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
    const { stored: startedAll, held: startingHeld } = await store.advance(
      starting.map((monitor) => ({ id: monitor.id, from: null, to: newest, baselines: null, changes: [], reset: false })),
      Date.now(),
      composeDelivery,
    );
    starting.forEach((monitor, n) => {
      if (startingHeld?.[n] !== true) this.#settle(monitor, startedAll[n] === true, newest);
    });
    // Nothing published since every position, and nothing lost: no page to read.
    let from = Number.POSITIVE_INFINITY;
    let behind = false;
    for (const { cursor, reset } of reading.values()) {
      from = Math.min(from, cursor);
      behind ||= reset || cursor < newest;
    }
    if (!behind) {
      link.setBehind(false);
      return false;
    }
    const page = await log.readAfter(from, READ_PAGE);
    const end = page.at(-1)?.id ?? from;
    const full = page.length === READ_PAGE;
    if (full) link.setBehind(true);
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
      const { stored, held } = await store.advance(slice, Date.now(), composeDelivery);
      if (slice.some((update, n) => stored[n] === true && (update.changes.length > 0 || update.reset))) link.formed();
      slice.forEach((update, n) => {
        const monitor = written[at + n]!;
        if (held?.[n] === true) {
          // Another transaction held it: a position alone moves on in memory (written later); with
          // changes or a reset, it stays where it was, and the next round reads those events again.
          if (update.changes.length === 0 && !update.reset) monitor.read = update.to;
          return;
        }
        this.#settle(monitor, stored[n] === true, update.to, update.baselines);
        if (stored[n] === true && update.reset) this.#logger.warn('monitor resumed after lost price events', { monitor: update.id, position: update.from, resumed_at: reading.get(update.id)?.cursor });
      });
    });
    if (writeIdle) this.#idleWrittenAt = now;
    link.setBehind(full);
    return full;
  }

  /**
   * After advance(): a monitor written moves on with the baselines its changes set; one that was
   * not (another instance moved it, or it stopped) is read again from the store next round.
   */
  #settle(monitor: ReaderMonitor, stored: boolean, to: number, baselines: Baselines | null = null): void {
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
}
