// The hub's subscribers that sent a `Filter`, arranged so that an event reaches the interested
// ones without evaluating every filter: filters that narrow to ids (`product_id`, `variant_id` or
// `sku` by `=` or `IN`, alone or within AND/OR; see event-filter.ts) are looked up by the event's
// three ids, so a published event costs three map look-ups however many such subscribers there
// are; the other filters are evaluated on each event of their subscribers' topics.
// Guarantee: forEachMatch calls `deliver` exactly once for each subscriber whose topics hold the
// event's topic and whose filter matches it.
import type { StoredPriceEvent } from '../prices/price-log.ts';
import { eventFieldsOf, INDEXED_FIELDS, type EventFields, type EventFilter, type IndexedField } from './event-filter.ts';

interface Entry<S> {
  readonly subscriber: S;
  readonly filter: EventFilter;
  /** The id of the last event this entry was visited for: an event found by two ids is delivered once. */
  visitedFor: number;
}

export class FilteredSubscribers<S extends { readonly topics: ReadonlySet<string> }> {
  readonly #entries = new Map<S, Entry<S>>();
  readonly #byId = new Map<IndexedField, Map<string, Set<Entry<S>>>>(INDEXED_FIELDS.map((field) => [field, new Map()]));
  readonly #scannedByTopic = new Map<string, Set<Entry<S>>>();

  get size(): number {
    return this.#entries.size;
  }

  add(subscriber: S, filter: EventFilter): void {
    const entry: Entry<S> = { subscriber, filter, visitedFor: 0 };
    this.#entries.set(subscriber, entry);
    if (filter.index === null) {
      for (const topic of subscriber.topics) this.#setOf(this.#scannedByTopic, topic).add(entry);
      return;
    }
    for (const [field, values] of filter.index) {
      const byValue = this.#byId.get(field) as Map<string, Set<Entry<S>>>;
      for (const value of values) this.#setOf(byValue, value).add(entry);
    }
  }

  delete(subscriber: S): void {
    const entry = this.#entries.get(subscriber);
    if (entry === undefined) return;
    this.#entries.delete(subscriber);
    if (entry.filter.index === null) {
      for (const topic of subscriber.topics) this.#remove(this.#scannedByTopic, topic, entry);
      return;
    }
    for (const [field, values] of entry.filter.index) {
      const byValue = this.#byId.get(field) as Map<string, Set<Entry<S>>>;
      for (const value of values) this.#remove(byValue, value, entry);
    }
  }

  /** Calls `deliver` once for each subscriber that wants `event` (see the guarantee above). */
  forEachMatch(event: StoredPriceEvent, deliver: (subscriber: S) => void): void {
    if (this.#entries.size === 0) return;
    const fields: EventFields = eventFieldsOf(event.data);
    for (const field of INDEXED_FIELDS) {
      const value = fields[field];
      if (typeof value !== 'string') continue;
      const entries = this.#byId.get(field)?.get(value);
      if (entries === undefined) continue;
      for (const entry of entries) {
        if (entry.visitedFor === event.id) continue;
        entry.visitedFor = event.id;
        if (!entry.subscriber.topics.has(event.topic)) continue;
        if (entry.filter.indexIsExact || entry.filter.matches(fields)) deliver(entry.subscriber);
      }
    }
    const scanned = this.#scannedByTopic.get(event.topic);
    if (scanned === undefined) return;
    for (const entry of scanned) if (entry.filter.matches(fields)) deliver(entry.subscriber);
  }

  #setOf<K>(map: Map<K, Set<Entry<S>>>, key: K): Set<Entry<S>> {
    let set = map.get(key);
    if (set === undefined) {
      set = new Set();
      map.set(key, set);
    }
    return set;
  }

  #remove<K>(map: Map<K, Set<Entry<S>>>, key: K, entry: Entry<S>): void {
    const set = map.get(key);
    if (set === undefined) return;
    set.delete(entry);
    if (set.size === 0) map.delete(key);
  }
}
