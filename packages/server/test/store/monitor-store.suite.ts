// The one conformance suite every MonitorStore adapter must pass (monitors/monitor-store.ts states
// the guarantees). Invoke it from an adapter's test with a factory that opens empty stores.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PriceChange } from '@catalog/contract';
import { buildPriceChange } from '@catalog/contract/testing';
import { MAX_CHANGES_PER_DELIVERY, priceChangedBody, type MonitorSettings } from '../../src/monitors/monitor.ts';
import { MonitorKeyRefused, type ComposeDelivery, type MonitorStore } from '../../src/monitors/monitor-store.ts';
import type { KeyAdministration } from '../../src/store/key-store.ts';

export interface OpenedMonitorStores {
  monitors: MonitorStore;
  keys: KeyAdministration;
  /** The rows of the adapter's baseline log (advance() appends a round's baselines there and folds them into their table once it is long). */
  baselineLogRows(): Promise<number>;
  /** The rows of the monitors' outbox tables (changes, deliveries, baselines and the baseline log), over every monitor. */
  outboxRows(): Promise<number>;
  cleanup(): Promise<void>;
}

function settings(overrides: Partial<MonitorSettings> = {}): MonitorSettings {
  return { url: 'https://hooks.example.com/prices', filter: 'market = "US"', minChangePercent: 5, minIntervalMs: 0, ...overrides };
}

let composed = 0;
const compose: ComposeDelivery = (monitorId, changes, reset, now) => ({ messageId: `msg_test${(composed += 1)}`, body: priceChangedBody(monitorId, changes, reset, now) });
const changesOf = (body: string): PriceChange[] => (JSON.parse(body) as { data: { changes: PriceChange[] } }).data.changes;
const resetOf = (body: string): boolean => (JSON.parse(body) as { data: { reset: boolean } }).data.reset;

export function describeMonitorStoreConformance(name: string, open: () => Promise<OpenedMonitorStores>): void {
  describe(`MonitorStore conformance: ${name}`, () => {
    let stores: OpenedMonitorStores;
    let monitors: MonitorStore;
    let proKey: string;
    beforeEach(async () => {
      stores = await open();
      monitors = stores.monitors;
      proKey = await stores.keys.createKey('pro', 'monitors');
    });
    afterEach(async () => {
      await stores.cleanup();
    });

    /** A monitor of the Pro key, read once by the log reader (position 0). */
    async function readyMonitor(overrides: Partial<MonitorSettings> = {}): Promise<string> {
      const { monitor } = await monitors.addMonitor(proKey, settings(overrides));
      expect((await monitors.advance([{ id: monitor.id, from: null, to: 0, baselines: {}, changes: [], reset: false }], 0, compose)).stored).toEqual([true]);
      return monitor.id;
    }

    describe('addMonitor', () => {
      it('stores a monitor of a Pro key, given as the key or its id, with a whsec_ secret shown only then', async () => {
        const { monitor, secret } = await monitors.addMonitor(proKey, settings());
        expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
        expect(monitor).toMatchObject({ id: expect.stringMatching(/^mon_[0-9a-f]{12}$/), enabled: true, disabledReason: null, filter: 'market = "US"' });
        const [info] = await stores.keys.listKeys();
        const byId = await monitors.addMonitor(info!.id, settings({ minChangePercent: 0 }));
        expect(byId.monitor.keyId).toBe(info!.id);
        const listed = await monitors.listMonitors(proKey);
        expect(listed.map((view) => view.id)).toEqual([monitor.id, byId.monitor.id]);
        expect(JSON.stringify(listed)).not.toContain(secret);
        expect(listed[0]!.delivery).toEqual({ lastSuccessAt: null, lastFailureAt: null, lastFailureReason: null, backlog: 0, oldestDueAt: null });
      });

      it('refuses an unknown, a free and a revoked key, and stores nothing', async () => {
        const freeKey = await stores.keys.createKey('free');
        const revoked = await stores.keys.createKey('pro');
        await stores.keys.revokeKey(revoked);
        await expect(monitors.addMonitor('ck_unknown', settings())).rejects.toThrow(MonitorKeyRefused);
        await expect(monitors.addMonitor(freeKey, settings())).rejects.toThrow(/free plan; monitors need a pro key/);
        await expect(monitors.addMonitor(revoked, settings())).rejects.toThrow(/revoked/);
        expect(await monitors.listMonitors()).toEqual([]);
      });

      it("lists only the key's own monitors when given a key", async () => {
        const other = await stores.keys.createKey('pro');
        const { monitor } = await monitors.addMonitor(other, settings());
        await monitors.addMonitor(proKey, settings());
        expect((await monitors.listMonitors(other)).map((view) => view.id)).toEqual([monitor.id]);
        expect(await monitors.listMonitors()).toHaveLength(2);
      });
    });

    describe('advance', () => {
      it('stores the position, baselines and changes only when the position is still the one read', async () => {
        const id = await readyMonitor();
        const change = buildPriceChange({ stream_id: 7 });
        expect((await monitors.advance([{ id, from: 0, to: 7, baselines: { a: 1 }, changes: [change], reset: false }], 1_000, compose)).stored).toEqual([true]);
        // A second reader that read position 0 too writes nothing.
        expect((await monitors.advance([{ id, from: 0, to: 7, baselines: { a: 2 }, changes: [change], reset: false }], 1_000, compose)).stored).toEqual([false]);
        const [state] = await monitors.readerStates();
        expect(state).toEqual({ id, minChangePercent: 5, position: 7 });
        expect(await monitors.filtersOf([id, 'mon_gone'])).toEqual(new Map([[id, 'market = "US"']]));
        expect(await monitors.baselinesOf([id, 'mon_gone'])).toEqual(new Map([[id, { a: 1 }]]));
        expect((await monitors.listMonitors(proKey))[0]!.delivery.backlog).toBe(1);
      });

      it('writes the baselines given over the stored ones, keeping the others', async () => {
        const id = await readyMonitor();
        await monitors.advance([{ id, from: 0, to: 1, baselines: { a: 1, b: 1 }, changes: [buildPriceChange({ stream_id: 1 })], reset: false }], 1_000, compose);
        await monitors.advance([{ id, from: 1, to: 2, baselines: { a: 2, c: 3 }, changes: [buildPriceChange({ stream_id: 2 })], reset: false }], 1_000, compose);
        expect(await monitors.baselinesOf([id])).toEqual(new Map([[id, { a: 2, b: 1, c: 3 }]]));
      });

      it('folds the baseline log into the baselines once it is long, the newest price of a key winning', async () => {
        const [a, b] = [await readyMonitor(), await readyMonitor()];
        await monitors.advance([{ id: a, from: 0, to: 1, baselines: { x: 1, y: 1 }, changes: [], reset: false }, { id: b, from: 0, to: 1, baselines: { x: 5 }, changes: [], reset: false }], 1_000, compose);
        expect(await stores.baselineLogRows()).toBe(3);
        const many = Object.fromEntries(Array.from({ length: 200_000 }, (_, n) => [`k${n}`, n]));
        expect((await monitors.advance([{ id: a, from: 1, to: 2, baselines: { ...many, x: 3 }, changes: [], reset: false }], 1_001, compose)).stored).toEqual([true]);
        expect(await stores.baselineLogRows()).toBe(0);
        await monitors.advance([{ id: b, from: 1, to: 2, baselines: { x: 6, z: 7 }, changes: [], reset: false }], 1_002, compose);
        const baselines = await monitors.baselinesOf([a, b]);
        expect(Object.keys(baselines.get(a)!)).toHaveLength(200_002);
        expect(baselines.get(a)).toMatchObject({ x: 3, y: 1, k0: 0, k199999: 199_999 });
        expect(baselines.get(b)).toEqual({ x: 6, z: 7 });
        await monitors.removeMonitor(b);
        expect(await stores.baselineLogRows()).toBe(0);
      });

      it('writes nothing for a disabled monitor or one whose key is revoked', async () => {
        const disabled = await readyMonitor();
        await monitors.advance([{ id: disabled, from: 0, to: 1, baselines: {}, changes: [buildPriceChange()], reset: false }], 1_000, compose);
        const [first] = await monitors.claimDue(1_000, 10, 30_000, compose);
        await monitors.recordAttempts([{ delivery: first!, outcome: { result: 'disabled', at: 1_001, reason: 'the endpoint answered 410 Gone' } }], 1_001, compose);
        expect((await monitors.advance([{ id: disabled, from: 1, to: 2, baselines: { a: 1 }, changes: [buildPriceChange()], reset: false }], 1_002, compose)).stored).toEqual([false]);
        const other = await stores.keys.createKey('pro');
        const { monitor: revoked } = await monitors.addMonitor(other, settings(), 0);
        await stores.keys.revokeKey(other);
        expect((await monitors.advance([{ id: revoked.id, from: 0, to: 2, baselines: { a: 1 }, changes: [buildPriceChange()], reset: false }], 1_002, compose)).stored).toEqual([false]);
        expect(await monitors.baselinesOf([disabled, revoked.id])).toEqual(new Map([[disabled, {}], [revoked.id, {}]]));
        expect(await monitors.deliveryTotals()).toMatchObject({ backlog: 0 });
      });

      it('stores each monitor of a round whose position is still the one read, keeping the baselines of those given none', async () => {
        const [moved, kept, stale] = [await readyMonitor(), await readyMonitor(), await readyMonitor()];
        await monitors.advance([{ id: kept, from: 0, to: 3, baselines: { b: 2 }, changes: [buildPriceChange({ stream_id: 3 })], reset: false }], 1_000, compose);
        const changes = [buildPriceChange({ stream_id: 8 }), buildPriceChange({ stream_id: 9 })];
        expect(
          (
            await monitors.advance([
              { id: moved, from: 0, to: 9, baselines: { a: 1 }, changes, reset: false },
              { id: kept, from: 3, to: 9, baselines: null, changes: [], reset: false },
              { id: stale, from: 4, to: 9, baselines: { c: 3 }, changes, reset: false },
            ], 1_000, compose)
          ).stored,
        ).toEqual([true, true, false]);
        const states = new Map((await monitors.readerStates()).map((state) => [state.id, state]));
        const baselines = await monitors.baselinesOf([moved, kept, stale]);
        expect([moved, kept, stale].map((id) => [states.get(id)!.position, baselines.get(id)])).toEqual([[9, { a: 1 }], [9, { b: 2 }], [0, {}]]);
        const [delivery] = (await monitors.claimDue(1_000, 10, 30_000, compose)).filter((due) => due.monitorId === moved);
        expect(changesOf(delivery!.body).map((change) => change.stream_id)).toEqual([8, 9]);
      });

      it('leaves out disabled monitors and those of revoked keys', async () => {
        const other = await stores.keys.createKey('pro');
        await monitors.addMonitor(other, settings());
        const kept = await readyMonitor();
        await stores.keys.revokeKey(other);
        expect((await monitors.readerStates()).map((state) => state.id)).toEqual([kept]);
        expect(await monitors.listMonitors(other)).toEqual([expect.objectContaining({ enabled: false, disabledReason: 'its key is revoked' })]);
      });
    });

    describe('claimDue', () => {
      it('forms one delivery per monitor from its oldest changes, in log order, claimed by one caller until its lease ends', async () => {
        const id = await readyMonitor();
        const changes = Array.from({ length: MAX_CHANGES_PER_DELIVERY + 2 }, (_, n) => buildPriceChange({ stream_id: n + 1 }));
        await monitors.advance([{ id, from: 0, to: changes.length, baselines: {}, changes, reset: false }], 1_000, compose);
        const [first, ...none] = await monitors.claimDue(1_000, 10, 30_000, compose);
        expect(none).toEqual([]);
        expect(first).toMatchObject({ monitorId: id, url: 'https://hooks.example.com/prices', attempts: 0, secret: expect.stringMatching(/^whsec_/) });
        expect(changesOf(first!.body).map((change) => change.stream_id)).toEqual(changes.slice(0, MAX_CHANGES_PER_DELIVERY).map((change) => change.stream_id));
        // Claimed: nobody else gets it, and the rest waits for it.
        expect(await monitors.claimDue(2_000, 10, 30_000, compose)).toEqual([]);
        // A claimant that died: the same delivery, id and body, once the lease has run out.
        const [again] = await monitors.claimDue(31_001, 10, 30_000, compose);
        expect(again).toMatchObject({ messageId: first!.messageId, body: first!.body });
        await monitors.recordAttempts([{ delivery: again!, outcome: { result: 'delivered', at: 31_002 } }], 31_002, compose);
        const [next] = await monitors.claimDue(31_003, 10, 30_000, compose);
        expect(changesOf(next!.body).map((change) => change.stream_id)).toEqual([MAX_CHANGES_PER_DELIVERY + 1, MAX_CHANGES_PER_DELIVERY + 2]);
        const [view] = await monitors.listMonitors(proKey);
        expect(view!.delivery).toMatchObject({ lastSuccessAt: 31_002, backlog: 2 });
      });

      it('hands the deliveries a write forms to its caller, claimed, up to its limit; the rest wait for claimDue', async () => {
        const [a, b] = [await readyMonitor(), await readyMonitor()];
        const claim = { limit: 1, leaseMs: 30_000 };
        const { stored, claimed } = await monitors.advance(
          [
            { id: a, from: 0, to: 3, baselines: {}, changes: [buildPriceChange({ stream_id: 1 }), buildPriceChange({ stream_id: 3 })], reset: false },
            { id: b, from: 0, to: 3, baselines: {}, changes: [buildPriceChange({ stream_id: 2 })], reset: false },
          ],
          1_000,
          compose,
          claim,
        );
        expect(stored).toEqual([true, true]);
        expect(claimed).toEqual([expect.objectContaining({ monitorId: a, url: 'https://hooks.example.com/prices', attempts: 0, firstDueAt: 1_000, secret: expect.stringMatching(/^whsec_/) })]);
        expect(changesOf(claimed[0]!.body).map((change) => change.stream_id)).toEqual([1, 3]);
        // Beyond the limit: due for any caller; the claimed one is nobody else's until its lease ends.
        expect((await monitors.claimDue(1_000, 10, 30_000, compose)).map((due) => due.monitorId)).toEqual([b]);
        const [again] = await monitors.claimDue(31_000, 10, 30_000, compose);
        expect(again).toMatchObject({ monitorId: a, messageId: claimed[0]!.messageId, body: claimed[0]!.body });
        // Delivered with more waiting: the next one comes back claimed from the record.
        await monitors.advance([{ id: a, from: 3, to: 4, baselines: {}, changes: [buildPriceChange({ stream_id: 4 })], reset: false }], 31_001, compose);
        const next = await monitors.recordAttempts([{ delivery: again!, outcome: { result: 'delivered', at: 31_002 } }], 31_002, compose, claim);
        expect(next).toEqual([expect.objectContaining({ monitorId: a, attempts: 0, firstDueAt: 31_001 })]);
        expect(changesOf(next[0]!.body).map((change) => change.stream_id)).toEqual([4]);
        expect(await monitors.claimDue(31_003, 10, 30_000, compose)).toEqual([]);
        // Without a claim, what a record forms is due for claimDue.
        await monitors.advance([{ id: a, from: 4, to: 5, baselines: {}, changes: [buildPriceChange({ stream_id: 5 })], reset: false }], 31_004, compose);
        expect(await monitors.recordAttempts([{ delivery: next[0]!, outcome: { result: 'delivered', at: 31_005 } }], 31_005, compose)).toEqual([]);
        expect((await monitors.claimDue(31_006, 10, 30_000, compose)).map((due) => due.monitorId)).toEqual([a]);
      });

      it('forms the next delivery no sooner than the minimum interval after the last', async () => {
        const id = await readyMonitor({ minIntervalMs: 60_000 });
        await monitors.advance([{ id, from: 0, to: 1, baselines: {}, changes: [buildPriceChange()], reset: false }], 1_000, compose);
        const [first] = await monitors.claimDue(1_000, 10, 30_000, compose);
        await monitors.recordAttempts([{ delivery: first!, outcome: { result: 'delivered', at: 1_001 } }], 1_001, compose);
        await monitors.advance([{ id, from: 1, to: 2, baselines: {}, changes: [buildPriceChange()], reset: false }], 1_002, compose);
        expect(await monitors.claimDue(60_999, 10, 30_000, compose)).toEqual([]);
        expect(await monitors.claimDue(61_000, 10, 30_000, compose)).toHaveLength(1);
      });

      it('retries a failed delivery at its time, says why in the list, and says reset once after a loss', async () => {
        const id = await readyMonitor();
        await monitors.advance([{ id, from: 0, to: 5, baselines: {}, changes: [buildPriceChange()], reset: true }], 1_000, compose);
        const [first] = await monitors.claimDue(1_000, 10, 30_000, compose);
        expect(resetOf(first!.body)).toBe(true);
        await monitors.recordAttempts([{ delivery: first!, outcome: { result: 'failed', at: 1_001, reason: 'HTTP 500', retryAt: 6_000 } }], 1_001, compose);
        expect(await monitors.claimDue(5_999, 10, 30_000, compose)).toEqual([]);
        const [retry] = await monitors.claimDue(6_000, 10, 30_000, compose);
        expect(retry).toMatchObject({ messageId: first!.messageId, attempts: 1 });
        const [view] = await monitors.listMonitors(proKey);
        expect(view!.delivery).toMatchObject({ lastFailureAt: 1_001, lastFailureReason: 'HTTP 500', backlog: 1 });
        await monitors.recordAttempts([{ delivery: retry!, outcome: { result: 'delivered', at: 6_001 } }], 6_001, compose);
        await monitors.advance([{ id, from: 5, to: 6, baselines: {}, changes: [buildPriceChange()], reset: false }], 6_002, compose);
        const [later] = await monitors.claimDue(7_000, 10, 30_000, compose);
        expect(resetOf(later!.body)).toBe(false);
      });

      it('keeps a disabled monitor\'s delivery until it is enabled, then sends it at once', async () => {
        const id = await readyMonitor();
        await monitors.advance([{ id, from: 0, to: 1, baselines: {}, changes: [buildPriceChange()], reset: false }], 1_000, compose);
        const [first] = await monitors.claimDue(1_000, 10, 30_000, compose);
        await monitors.recordAttempts([{ delivery: first!, outcome: { result: 'disabled', at: 1_001, reason: 'the endpoint answered 410 Gone' } }], 1_001, compose);
        const [view] = await monitors.listMonitors(proKey);
        expect(view).toMatchObject({ enabled: false, disabledReason: 'the endpoint answered 410 Gone' });
        expect(await monitors.readerStates()).toEqual([]);
        expect(await monitors.claimDue(100_000, 10, 30_000, compose)).toEqual([]);
        expect(await monitors.deliveryTotals()).toMatchObject({ disabledMonitors: 1, backlog: 0 });
        expect(await monitors.enableMonitor(id)).toMatchObject({ id, enabled: true });
        const [again] = await monitors.claimDue(100_001, 10, 30_000, compose);
        expect(again).toMatchObject({ messageId: first!.messageId, attempts: 1 });
        expect(await monitors.deliveryTotals()).toEqual({ backlog: 1, oldestDueAt: expect.any(Number), disabledMonitors: 0 });
      });

      it("delivers nothing for a revoked key's monitors", async () => {
        const id = await readyMonitor();
        await monitors.advance([{ id, from: 0, to: 1, baselines: {}, changes: [buildPriceChange()], reset: false }], 1_000, compose);
        await stores.keys.revokeKey(proKey);
        expect(await monitors.claimDue(1_000, 10, 30_000, compose)).toEqual([]);
        expect(await monitors.enableMonitor(id)).toBeNull();
      });
    });

    describe('removeMonitor', () => {
      it('removes a monitor with what it had not delivered', async () => {
        const id = await readyMonitor();
        const kept = await readyMonitor();
        await monitors.advance([{ id, from: 0, to: 1, baselines: { 'v1|marketplacea|US': 120 }, changes: [buildPriceChange(), buildPriceChange()], reset: false }], 1_000, compose);
        await monitors.claimDue(1_000, 10, 30_000, compose);
        await monitors.advance([{ id, from: 1, to: 2, baselines: { 'v1|marketplacea|US': 130 }, changes: [buildPriceChange()], reset: false }], 1_000, compose);
        const before = await stores.outboxRows();
        // A delivery under way, a change waiting, and its baselines.
        expect(before).toBeGreaterThanOrEqual(4);
        await monitors.advance([{ id: kept, from: 0, to: 1, baselines: { 'v2|marketplacea|US': 90 }, changes: [buildPriceChange()], reset: false }], 1_000, compose);
        const withKept = await stores.outboxRows();
        expect(await monitors.removeMonitor(id)).toBe(true);
        // Nothing of it is left, and the other monitor's rows are untouched.
        expect(await stores.outboxRows()).toBe(withKept - before);
        expect(await monitors.removeMonitor(kept)).toBe(true);
        expect(await stores.outboxRows()).toBe(0);
        expect(await monitors.removeMonitor(id)).toBe(false);
        expect(await monitors.listMonitors()).toEqual([]);
        expect(await monitors.deliveryTotals()).toEqual({ backlog: 0, oldestDueAt: null, disabledMonitors: 0 });
      });
    });
  });
}
