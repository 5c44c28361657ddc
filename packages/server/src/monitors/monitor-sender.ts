// The price monitors' sender, started by `catalog serve` on every instance in a thread of its own
// (monitor-thread.ts), beside the log reader (monitor-reader.ts):
//
//   outbox ──claimDue──► signed POST (webhook-sender.ts) ──recordAttempts──► delivered | retried | disabled
//   recordAttempts ──the next deliveries it forms, claimed──► signed POST
//
// Guarantees: at least once and in log order per monitor (the store forms a monitor's next
// delivery only once the previous one was delivered, and keeps each delivery's id and body for
// its retries); nothing is lost across restarts (deliveries are in the catalog database; a claim
// whose instance died is taken again when its lease ends); each attempt is made by one instance
// (claims). The sender claims when the reader says it formed deliveries (the DeliveryLink), when
// a write left deliveries unclaimed and attempts have room again, and at the poll interval (retries
// whose time has come, claims whose instance died, a minimum interval that has passed: claimDue
// forms those every FORM_ALL_MS). A delivery formed by recordAttempts() (the next one of a monitor
// whose delivery was delivered) is claimed in that write and sent at once while there is room.
// Outcomes of attempts are recorded together, at most one write every RECORD_SPACING_MS, those
// that ended while the previous record was being written in the next one.
// Limits: at most MAX_IN_FLIGHT attempts being sent at a time per instance, `endpointConcurrency`
// per endpoint; an attempt's slot is free once its answer is in, while its outcome waits to be
// recorded; none starts while the reader says it is behind (monitor-reader.ts says why).
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../logger.ts';
import { monitorMetrics } from '../metrics.ts';
import { DEFAULT_POLL_MS, FIRST_RETRY_MS, runLoop, Wakeable, type DeliveryLink } from './delivery-loop.ts';
import { composeDelivery } from './monitor.ts';
import type { AttemptRecord, Claim, DeliveryOutcome, DueDelivery, MonitorStore } from './monitor-store.ts';
import { nextAttemptAt, retryAfterMs } from './retry-schedule.ts';
import type { AttemptResult, WebhookAttempt } from './webhook-sender.ts';

const MAX_IN_FLIGHT = 256;
/** How often claimDue looks for deliveries to form beyond those formed as they became due (a minimum interval is whole seconds). */
const FORM_ALL_MS = 1_000;
/** How long the outcomes of attempts are tried to be stored before those attempts count as unrecorded. */
const RECORD_RETRY_MS = 5_000;
/**
 * The least time from one write of outcomes to the next: the outcomes that end meanwhile share a
 * transaction (and a commit), at the cost of this long more before a monitor's next delivery.
 */
const RECORD_SPACING_MS = 10;

export interface MonitorSenderOptions {
  store: MonitorStore;
  sender: { send(attempt: WebhookAttempt): Promise<AttemptResult> };
  /** Where the reader says it formed deliveries, and whether it is behind. */
  link: DeliveryLink;
  logger: Logger;
  retryScheduleMs: readonly number[];
  timeoutMs: number;
  /** How often the outbox is looked at when idle. */
  pollMs?: number;
}

export class MonitorSender {
  readonly #options: MonitorSenderOptions;
  readonly #logger: Logger;
  readonly #stopped = new AbortController();
  /** Attempts being sent. */
  readonly #inFlight = new Set<Promise<void>>();
  /** Attempts whose outcome is not yet recorded. */
  readonly #unrecorded = new Set<Promise<void>>();
  readonly #wakeable = new Wakeable();
  #recording: AttemptRecord[] = [];
  #recorded: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  #recordingUnderWay = false;
  /** A write claimed as many deliveries as it could, or the reader formed some: more may be due for claimDue. */
  #unclaimed = false;
  #recordStartedAt = 0;
  #formedAllAt = 0;
  #loops: Promise<void>[] = [];

  constructor(options: MonitorSenderOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'monitors' });
  }

  start(): void {
    monitorMetrics.totals(() => this.#options.store.deliveryTotals());
    const signal = this.#stopped.signal;
    const pollMs = this.#options.pollMs ?? DEFAULT_POLL_MS;
    this.#loops = [
      runLoop('deliver', () => this.#deliverRound(), { wakeable: this.#wakeable, signal, logger: this.#logger, pollMs, spacingMs: 0 }),
      this.#options.link.watch(
        () => {
          this.#unclaimed = true;
          this.#wakeable.wake();
        },
        signal,
        pollMs,
      ),
    ];
  }

  /** Stops claiming, and waits for the attempts under way (each bounded by the timeout) and their records. */
  async stop(): Promise<void> {
    this.#stopped.abort();
    await Promise.all(this.#loops);
    await Promise.all(this.#inFlight);
    await Promise.all(this.#unrecorded);
    monitorMetrics.totals(null);
  }

  /**
   * What a write may claim of the deliveries it forms: the room left for attempts (none once
   * stopping, or while the reader is behind). A claim outlives the attempt's timeout, so a live
   * instance's attempt is never taken over.
   */
  #claim(): Claim {
    const room = this.#stopped.signal.aborted || this.#options.link.behind ? 0 : Math.max(0, MAX_IN_FLIGHT - this.#inFlight.size);
    return { limit: room, leaseMs: this.#options.timeoutMs * 2 + 5_000 };
  }

  /** Claims what is due and starts its attempts; true when it claimed as many as it could take. */
  async #deliverRound(): Promise<boolean> {
    const claim = this.#claim();
    if (claim.limit <= 0) return false;
    const now = Date.now();
    // Every delivery is formed as it becomes due but one whose minimum interval has since passed: those are looked for every FORM_ALL_MS.
    const formAll = now - this.#formedAllAt >= FORM_ALL_MS;
    const due = await this.#options.store.claimDue(now, claim.limit, claim.leaseMs, composeDelivery, formAll);
    if (formAll) this.#formedAllAt = now;
    this.#startAll(due, claim);
    return due.length === claim.limit;
  }

  /**
   * Starts the attempts of deliveries claimed within `claim` (both of the sender's writes claim
   * whatever is due, up to the limit). When it was used up, more may be due, for the sender to
   * claim once there is room; when not, nothing is left but what comes due later (the poll).
   */
  #startAll(claimed: readonly DueDelivery[], claim: Claim): void {
    for (const delivery of claimed) this.#start(delivery);
    if (claimed.length >= claim.limit) {
      this.#unclaimed = true;
      this.#wakeable.wake();
    } else this.#unclaimed = false;
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
      if (this.#unclaimed && this.#inFlight.size <= MAX_IN_FLIGHT / 2) this.#wakeable.wake();
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
        const next = await this.#options.store.recordAttempts(records, Date.now(), composeDelivery, claim);
        for (const { resolve } of waiting) resolve();
        // The next deliveries of the monitors whose delivery was delivered, and others due.
        this.#startAll(next, claim);
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
