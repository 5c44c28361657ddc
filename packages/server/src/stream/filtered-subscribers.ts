// The hub's subscribers that sent a `Filter`, arranged so that an event reaches the interested
// ones without evaluating every filter: filters that narrow to ids (`product_id`, `variant_id` or
// `sku` by `=` or `IN`, alone or within AND/OR; see event-filter.ts) are looked up by the event's
// three ids, so a published event costs three map look-ups however many such subscribers there
// are; the other filters are evaluated on each event of their subscribers' topics.
// Guarantee: forEachMatch calls `deliver` exactly once for each subscriber whose topics hold the
// event's topic (any topic when its topics are null: a price monitor) and whose filter matches it.
import type { StoredPriceEvent } from '../prices/price-log.ts';
import { foldText } from '../catalog/text.ts';
import { eventFieldsOfPayload, eventPayloadOf, INDEXED_FIELDS, type EventFields, type EventFilter, type IndexedField } from './event-filter.ts';

/**
 * One subscriber's place in the index. Everything a look-up reads for a candidate is on this
 * object or shared by many (the topics), so that a candidate costs as few objects touched as can
 * be: an event reaches subscribers spread over the heap, one or two each, rather than in a run.
 */
class Entry<S> {
  readonly subscriber: S;
  readonly filter: EventFilter;
  /** filter.indexIsExact, kept here. */
  readonly exact: boolean;
  /** The subscriber's topics as one Set shared by every entry with the same topics (see SharedTopics); null: every topic. */
  readonly topics: SharedTopics | null;
  /** The forEachMatch call that last visited this entry (a small integer): an event found by two ids is delivered once. */
  visitedIn = 0;

  constructor(subscriber: S, filter: EventFilter, topics: SharedTopics | null) {
    this.subscriber = subscriber;
    this.filter = filter;
    this.exact = filter.indexIsExact;
    this.topics = topics;
  }
}

/** A set of topics shared by the entries of every subscriber with the same topics, and how many use it. */
class SharedTopics {
  readonly key: string;
  readonly set: ReadonlySet<string>;
  users = 0;

  constructor(key: string, topics: ReadonlySet<string>) {
    this.key = key;
    this.set = new Set(topics);
  }
}

/** Wraps before leaving the small integers, which V8 stores in the field itself (a larger number is a separate object). */
const VISITS_WRAP_AT = 2 ** 30;

export class FilteredSubscribers<S extends { readonly topics: ReadonlySet<string> | null }> {
  readonly #entries = new Map<S, Entry<S>>();
  /**
   * Per id field and value, the entries whose filter lists it: arrays rather than Sets, as each
   * holds a few entries (10,000 filters of 100 ids over 100,000 products: about 10) and there is
   * one per value listed, so that a look-up reads one small contiguous block and the heap every
   * major collection marks holds one object per value instead of a hash table.
   */
  readonly #byId = new Map<IndexedField, Map<string, Entry<S>[]>>(INDEXED_FIELDS.map((field) => [field, new Map()]));
  readonly #scannedByTopic = new Map<string, Entry<S>[]>();
  readonly #scannedEverywhere: Entry<S>[] = [];
  readonly #topics = new Map<string, SharedTopics>();
  /** Counts forEachMatch calls, for Entry.visitedIn; never 0 after the first. */
  #visits = 0;

  get size(): number {
    return this.#entries.size;
  }

  add(subscriber: S, filter: EventFilter): void {
    const entry = new Entry(subscriber, filter, subscriber.topics === null ? null : this.#shareTopics(subscriber.topics));
    this.#entries.set(subscriber, entry);
    if (filter.index === null) {
      if (subscriber.topics === null) this.#scannedEverywhere.push(entry);
      else for (const topic of subscriber.topics) this.#listOf(this.#scannedByTopic, topic).push(entry);
      return;
    }
    for (const [field, values] of filter.index) {
      const byValue = this.#byId.get(field) as Map<string, Entry<S>[]>;
      // A field's values are without repeats: an entry is in each list once.
      for (const value of values) this.#listOf(byValue, value).push(entry);
    }
  }

  delete(subscriber: S): void {
    const entry = this.#entries.get(subscriber);
    if (entry === undefined) return;
    this.#entries.delete(subscriber);
    if (entry.topics !== null && --entry.topics.users === 0) this.#topics.delete(entry.topics.key);
    if (entry.filter.index === null) {
      if (subscriber.topics === null) this.#scannedEverywhere.splice(this.#scannedEverywhere.indexOf(entry), 1);
      else for (const topic of subscriber.topics) this.#remove(this.#scannedByTopic, topic, entry);
      return;
    }
    for (const [field, values] of entry.filter.index) {
      const byValue = this.#byId.get(field) as Map<string, Entry<S>[]>;
      for (const value of values) this.#remove(byValue, value, entry);
    }
  }

  /**
   * Calls `deliver` once for each subscriber that wants `event` (see the guarantee above). The
   * event's text is parsed once; its ids are folded for the look-up, and its other fields only
   * when a filter beyond an exact id list asks for them.
   */
  forEachMatch(event: StoredPriceEvent, deliver: (subscriber: S) => void): void {
    if (this.#entries.size === 0) return;
    const visit = (this.#visits = (this.#visits % VISITS_WRAP_AT) + 1);
    const payload = eventPayloadOf(event.data);
    const { topic } = event;
    let fields: EventFields | null = null;
    for (const field of INDEXED_FIELDS) {
      const byValue = this.#byId.get(field) as Map<string, Entry<S>[]>;
      // A field no filter narrows to costs neither a fold nor a look-up.
      if (byValue.size === 0) continue;
      const value = payload?.[field];
      if (typeof value !== 'string') continue;
      const entries = byValue.get(foldText(value));
      if (entries === undefined) continue;
      for (const entry of entries) {
        if (entry.visitedIn === visit) continue;
        entry.visitedIn = visit;
        if (entry.topics !== null && !entry.topics.set.has(topic)) continue;
        if (entry.exact || entry.filter.matches((fields ??= eventFieldsOfPayload(payload)))) deliver(entry.subscriber);
      }
    }
    const scanned = this.#scannedByTopic.get(topic);
    if (scanned !== undefined) {
      fields ??= eventFieldsOfPayload(payload);
      for (const entry of scanned) if (entry.filter.matches(fields)) deliver(entry.subscriber);
    }
    if (this.#scannedEverywhere.length === 0) return;
    fields ??= eventFieldsOfPayload(payload);
    for (const entry of this.#scannedEverywhere) if (entry.filter.matches(fields)) deliver(entry.subscriber);
  }

  /** The SharedTopics for `topics`, counted as used once more. */
  #shareTopics(topics: ReadonlySet<string>): SharedTopics {
    const key = JSON.stringify([...topics].sort());
    let shared = this.#topics.get(key);
    if (shared === undefined) {
      shared = new SharedTopics(key, topics);
      this.#topics.set(key, shared);
    }
    shared.users += 1;
    return shared;
  }

  #listOf<K>(map: Map<K, Entry<S>[]>, key: K): Entry<S>[] {
    let list = map.get(key);
    if (list === undefined) {
      list = [];
      map.set(key, list);
    }
    return list;
  }

  #remove<K>(map: Map<K, Entry<S>[]>, key: K, entry: Entry<S>): void {
    const list = map.get(key);
    if (list === undefined) return;
    const at = list.indexOf(entry);
    if (at === -1) return;
    list.splice(at, 1);
    if (list.length === 0) map.delete(key);
  }
}
