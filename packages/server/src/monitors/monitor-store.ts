// The port the monitors are kept behind: SqliteMonitorStore and PostgresMonitorStore, in the
// catalog database beside the keys. One conformance suite (test/store/monitor-store.suite.ts) runs
// against each adapter.
//
// Guarantees every adapter gives:
// - a monitor belongs to one Pro key; a revoked key's monitors are neither read for nor delivered
//   (they stay listed, and a revoked key is never valid again);
// - advance() is the outbox's one write from the price log: for each monitor of a round, its new
//   log position, the baselines its changes set and the changes due, all in one transaction, each
//   monitor's only when its position is still the one the caller read (another instance, or an
//   earlier round, may have moved it) and it is still enabled with its key active, so each change
//   is stored once whatever number of instances read the log, and none after a monitor stopped;
// - claimDue() hands each due delivery to one caller for `leaseMs` (a claim moves the delivery's
//   next attempt to the lease's end: the time it is tried again should the claimant die), and
//   advance() and recordAttempts() hand those they form to their caller the same way, up to the
//   caller's `Claim` limit (the rest are due for claimDue): a monitor has at most one
//   delivery at a time (the next is formed only once the previous was delivered), formed from its
//   oldest changes, so deliveries follow the log's order; a delivery keeps its id and body on every
//   attempt; a delivery is formed in the transaction that makes it due (changes stored, the previous
//   one delivered; a monitor with nothing waiting gets it from the changes given, and stores only
//   those beyond it) or, after a minimum interval, by claimDue; PostgreSQL claims with FOR UPDATE SKIP
//   LOCKED, SQLite in one IMMEDIATE transaction;
// - a delivery whose claimant died is claimed again once its lease has run out;
// - recordAttempts() stores the outcomes of several attempts in one transaction.
// Failure modes: ServiceUnavailable when the database cannot answer (PostgreSQL), as for the keys.
import type { Baselines } from './price-changes.ts';
import type { PriceChange } from '@catalog/contract';
import type { Monitor, MonitorSettings, MonitorView } from './monitor.ts';

/** What the price log reader needs of an enabled monitor each round (its filter: filtersOf, once). */
export interface MonitorReaderState {
  id: string;
  minChangePercent: number;
  /** The newest log id read for it; null until the service first reads for it (it then starts at the log's newest event). */
  position: number | null;
}

export interface MonitorAdvance {
  id: string;
  /** The position the caller read the state at: the write happens only if it is still the same. */
  from: number | null;
  to: number;
  /** The baselines `changes` set (priceChangesOf); the monitor's others are kept. Null: none. */
  baselines: Baselines | null;
  changes: readonly PriceChange[];
  /** Events the monitor had not read were lost (the stream's `reset`): the next delivery says so. */
  reset: boolean;
}

/** One delivery, claimed for sending. */
export interface DueDelivery {
  messageId: string;
  monitorId: string;
  url: string;
  secret: string;
  body: string;
  /** Attempts made before this one. */
  attempts: number;
  /** When the delivery was formed (its first attempt was due). */
  firstDueAt: number;
}

/** How many of the deliveries a write forms are claimed for its caller at once, and for how long. */
export interface Claim {
  limit: number;
  leaseMs: number;
}

/** What advance() did: per update, whether it was stored; the deliveries it formed and claimed for the caller. */
export interface Advanced {
  stored: boolean[];
  /**
   * Per update, true when another transaction held the monitor and nothing of it was written: the
   * caller gives it again later, as it was (PostgreSQL; absent where writes never meet a held monitor).
   */
  held?: boolean[];
  claimed: DueDelivery[];
}

/** The deliveries a write forms, claimed for its caller up to the claim's limit. */
export class Claiming {
  readonly now: number;
  readonly claimed: DueDelivery[] = [];
  readonly #claim: Claim | undefined;

  constructor(now: number, claim?: Claim) {
    this.now = now;
    this.#claim = claim;
  }

  /** How many more deliveries may be claimed. */
  get room(): number {
    return this.#claim === undefined ? 0 : Math.max(0, this.#claim.limit - this.claimed.length);
  }

  /** The end of a lease taken now; also the claimed delivery's next attempt: when it is tried again should its claimant die. */
  get leaseEnd(): number {
    return this.now + (this.#claim?.leaseMs ?? 0);
  }

  /** Claims `delivery` when there is room: the end of its lease; null when it is left due. */
  take(delivery: DueDelivery): number | null {
    if (this.room === 0) return null;
    this.claimed.push(delivery);
    return this.leaseEnd;
  }

  /** Keeps only the claimed deliveries that were stored after all. */
  keep(stored: (delivery: DueDelivery) => boolean): void {
    const kept = this.claimed.filter(stored);
    this.claimed.length = 0;
    this.claimed.push(...kept);
  }
}

/** Builds a delivery's body from a monitor's oldest changes (monitor.ts priceChangedBody). */
export type ComposeDelivery = (monitorId: string, changes: readonly PriceChange[], reset: boolean, now: number) => { messageId: string; body: string };

export type DeliveryOutcome =
  | { result: 'delivered'; at: number }
  /** Retried at `retryAt`. */
  | { result: 'failed'; at: number; reason: string; retryAt: number }
  /** The monitor is disabled; the delivery stays, to be retried once it is enabled again. */
  | { result: 'disabled'; at: number; reason: string };

export interface AttemptRecord {
  delivery: DueDelivery;
  outcome: DeliveryOutcome;
}

export interface DeliveryTotals {
  /** Changes not yet delivered, over every enabled monitor. */
  backlog: number;
  /** When the oldest of them was due; null without any. */
  oldestDueAt: number | null;
  disabledMonitors: number;
}

/** The refusal of a monitor for its key: unknown, revoked, or not Pro. */
export class MonitorKeyRefused extends Error {}

export interface MonitorStore {
  /**
   * Stores a monitor of the key given as the key or its id; throws MonitorKeyRefused. `position`
   * is the price log's newest id at creation (it delivers what is published after it); null when
   * the log was not at hand: it then starts where the service first reads for it.
   */
  addMonitor(keyOrId: string, settings: MonitorSettings, position?: number | null): Promise<{ monitor: Monitor; secret: string }>;
  /** Every monitor with its delivery state, oldest first; only the key's when `key` (as sent) is given. */
  listMonitors(key?: string): Promise<MonitorView[]>;
  /** Removes a monitor and whatever it had not delivered; false when there is no such monitor. */
  removeMonitor(id: string): Promise<boolean>;
  /** Enables a monitor again (its waiting delivery is retried at once); null when there is none, or its key is revoked. */
  enableMonitor(id: string): Promise<Monitor | null>;

  /** Enabled monitors of active keys, as the log reader needs them. */
  readerStates(): Promise<MonitorReaderState[]>;
  /** These monitors' filters; a monitor's filter never changes once it is made, so a reader may keep it. */
  filtersOf(ids: readonly string[]): Promise<Map<string, string>>;
  /** The stored baselines of these monitors (read only for those an event reached); a monitor that is gone is left out. */
  baselinesOf(ids: readonly string[]): Promise<Map<string, Baselines>>;
  /**
   * See the module's guarantees; per update, false when its position had moved, or the monitor
   * stopped, and nothing of it was written (PostgreSQL: or when another transaction holds the monitor, `held`: advance()
   * never waits for one). The changes are due at `now`; a monitor given changes that has no delivery under
   * way gets one formed (`compose`), claimed for the caller within `claim` (none without).
   */
  advance(updates: readonly MonitorAdvance[], now: number, compose: ComposeDelivery, claim?: Claim): Promise<Advanced>;
  /**
   * Claims up to `limit` due deliveries for `leaseMs`; with `formAll` (the default) it first forms
   * every delivery that is due and not yet formed (those advance() and recordAttempts() did not:
   * a minimum interval that has passed since), which reads every monitor with changes.
   */
  claimDue(now: number, limit: number, leaseMs: number, compose: ComposeDelivery, formAll?: boolean): Promise<DueDelivery[]>;
  /**
   * Records the outcomes of attempts at claimed deliveries; a monitor whose delivery was delivered
   * gets its next formed, at `now`, when due (`compose`). Returns the deliveries claimed for the
   * caller within `claim` (none without): those formed, then others due, oldest first (as claimDue).
   */
  recordAttempts(records: readonly AttemptRecord[], now: number, compose: ComposeDelivery, claim?: Claim): Promise<DueDelivery[]>;
  deliveryTotals(): Promise<DeliveryTotals>;
}

/** A row of monitors LEFT JOIN monitor_baselines: a monitor with no baseline comes with key null. */
export interface BaselineRow {
  id: string;
  key: string | null;
  price: number | null;
}

/** Each monitor's baselines (empty for one with none), from its rows of BaselineRow. */
export function baselinesByMonitor(rows: readonly BaselineRow[]): Map<string, Baselines> {
  const baselines = new Map<string, Baselines>();
  for (const row of rows) {
    let of = baselines.get(row.id);
    if (of === undefined) baselines.set(row.id, (of = {}));
    if (row.key !== null) of[row.key] = row.price!;
  }
  return baselines;
}
