// Sparse answers: a search whose AND has an operand answered by short posting lists (a shop, a
// brand, a product type, tags, an id, product id, title or slug, or an OR of those) is answered
// from those lists alone when that is estimated cheaper than the shortest dense answer (a count
// and a page walk over every word of the catalog): the lists' slots, each checked against the
// AND's other operands by the columns (leaf-costs.ts), counted and paged with no bitset. Its cost
// follows the lists' entries, not the catalog's size, which is what a selective filter should
// cost on a large catalog. A hashed field's "list" is its look-up's chain (hash-lookup.ts).
//
// Guarantees: exact, the same slots, total and page as the dense path (the checks are the
// columns' own, the driver's lists are read with the owner's `holds` as LeafBits reads them); ties
// broken by cursor in every sort. Limits: synchronous (no yield), bounded by the cost rule; an
// operand with no column check (a range bound that is not a number, `cursor`, `available` other
// than an equality) sends the search to the dense path.
import type { FilterExpr, FilterLiteral } from '../filter/ast.ts';
import { foldText, wordsOf } from '../text.ts';
import { hasBit, wordsFor } from './bits.ts';
import { isHashedField, type CodedField, type StorefrontColumns } from './columns.ts';
import { distinctHashes } from './hash.ts';
import { columnCheck, sparseCheckCost, wordColumnCheck, type ColumnCheck } from './leaf-costs.ts';
import { availableSide } from './leaf-keys.ts';
import type { SearchTerms } from './evaluator.ts';
import type { PageRequest } from './page.ts';
import { sortKeyOf } from './sort-orders.ts';

/** Slots read from posting lists: how many entries reading them goes through, and the reading. */
interface Driver {
  entries: number;
  /** Calls `each` with every slot (once per list holding it). */
  forEach(each: (slot: number) => void): void;
  /** Whether a slot can be met twice (several lists of a field a slot holds several of). */
  repeats: boolean;
  /** The lists read: more than one, and the slots come out of slot order. */
  lists: number;
}

/** The search as an AND: each operand's posting-list reading (if it has one) and column check (if it has one). */
interface Operand {
  driver: Driver | undefined;
  check: ColumnCheck | undefined;
}

const CODED: ReadonlySet<string> = new Set(['shop_name', 'brand', 'product_type']);

/** Scratch the matches are gathered in; grown as needed. */
let SCRATCH: Int32Array = new Int32Array(1024);

/**
 * The page and total of `search` answered sparsely, or undefined when the dense path is estimated
 * cheaper or the search has an operand the sparse path cannot check.
 */
export function sparseAnswer(columns: StorefrontColumns, search: SearchTerms & PageRequest): { cursors: number[]; total: number } | undefined {
  const operands = operandsOf(columns, search);
  if (operands === undefined || operands.length === 0) return undefined;
  let drive = -1;
  for (const [at, operand] of operands.entries()) {
    if (operand.driver !== undefined && (drive < 0 || operand.driver.entries < operands[drive]!.driver!.entries)) drive = at;
  }
  if (drive < 0) return undefined;
  const driver = operands[drive]!.driver!;
  const checks: ColumnCheck[] = [];
  for (const [at, operand] of operands.entries()) {
    if (at === drive) continue;
    if (operand.check === undefined) return undefined;
    checks.push(operand.check);
  }
  const sorted = search.sort !== 'cursor:asc' && search.sort !== 'cursor:desc';
  if (sparseCheckCost(driver.entries, checks, driver.lists > 1, sorted) > denseFloor(columns.size)) return undefined;

  if (SCRATCH.length < driver.entries) SCRATCH = new Int32Array(Math.max(driver.entries, 2 * SCRATCH.length));
  const found = SCRATCH;
  let count = 0;
  driver.forEach((slot) => {
    for (const { check } of checks) if (!check(slot)) return;
    found[count++] = slot;
  });
  let matches: Int32Array = found.subarray(0, count);
  if (driver.repeats || !isAscending(matches)) matches = distinctAscending(matches);
  const key = sortKeyOf(search.sort);
  // The sort orders place a value that is not a number by slot alone: left to them.
  if (key !== undefined && matches.some((slot) => Number.isNaN(columns.numbers[key.field].data[slot]))) return undefined;
  return pageOfSlots(columns, search, matches, key);
}

/**
 * The cost of the shortest dense answer, in the units of leaf-costs.ts: a count and a page walk,
 * each reading every word of the catalog's bitsets.
 */
function denseFloor(size: number): number {
  return 2 * wordsFor(size);
}

/** The search's operands as one AND (its words, its shop, the filter's top-level operands), or undefined if one has neither a driver nor a check. */
function operandsOf(columns: StorefrontColumns, search: SearchTerms): Operand[] | undefined {
  const operands: Operand[] = [];
  if (search.text !== undefined) {
    for (const word of new Set(wordsOf(search.text))) operands.push({ driver: undefined, check: wordColumnCheck(columns, word) });
  }
  if (search.shopName !== undefined) {
    const node: FilterExpr = { type: 'compare', field: 'shop_name', operator: '=', value: search.shopName };
    operands.push({ driver: driverOf(columns, node), check: slotCheck(columns, node) });
  }
  const filter = search.filter;
  if (filter !== undefined) {
    for (const node of filter.type === 'and' ? filter.operands : [filter]) operands.push({ driver: driverOf(columns, node), check: slotCheck(columns, node) });
  }
  return operands;
}

/** The posting-list reading of `node`: an equality or IN (not negated) on a coded or hashed field or tags, or an OR of such. */
function driverOf(columns: StorefrontColumns, node: FilterExpr): Driver | undefined {
  if (node.type === 'or') {
    const parts = node.operands.map((operand) => driverOf(columns, operand));
    if (parts.some((part) => part === undefined)) return undefined;
    const drivers = parts as Driver[];
    return {
      entries: drivers.reduce((sum, part) => sum + part.entries, 0),
      forEach: (each) => {
        for (const part of drivers) part.forEach(each);
      },
      repeats: drivers.length > 1 || drivers.some((part) => part.repeats),
      lists: drivers.reduce((sum, part) => sum + part.lists, 0),
    };
  }
  let values: readonly FilterLiteral[];
  if (node.type === 'in' && !node.negated) values = node.values;
  else if (node.type === 'compare' && node.operator === '=') values = [node.value];
  else return undefined;
  if (CODED.has(node.field)) {
    const { dictionary, codes, postings } = columns.coded[node.field as CodedField];
    const column = codes.data;
    const held = [...new Set(values.flatMap((value) => dictionary.get(foldText(String(value))) ?? []))];
    const holds = (slot: number, code: number): boolean => column[slot] === code;
    return {
      entries: held.reduce((sum, code) => sum + postings.entries(code), 0),
      forEach: (each) => {
        for (const code of held) postings.forEach(code, each, holds);
      },
      // A slot holds one code of a field: lists of distinct codes share no slot.
      repeats: false,
      lists: held.length,
    };
  }
  if (isHashedField(node.field)) {
    const hashes = columns.hashes[node.field].data;
    const lookup = columns.hashLookup(node.field);
    const wanted = distinctHashes(values);
    return {
      entries: wanted.reduce((sum, [low]) => sum + lookup.chainLength(low), 0),
      forEach: (each) => {
        for (const [low, high] of wanted) lookup.forEach(hashes, low, high, each);
      },
      // A slot holds one hash of a field: distinct hashes share no slot.
      repeats: false,
      lists: wanted.length,
    };
  }
  if (node.field === 'tags') {
    const held = [...new Set(values.map((value) => columns.terms.find(foldText(String(value)))).filter((code) => code >= 0))];
    const lists = columns.tagsOf;
    const holds = (slot: number, code: number): boolean => lists.holds(slot, code);
    return {
      entries: held.reduce((sum, code) => sum + columns.tags.entries(code), 0),
      forEach: (each) => {
        for (const code of held) columns.tags.forEach(code, each, holds);
      },
      repeats: held.length > 1,
      lists: held.length,
    };
  }
  return undefined;
}

/** Whether a slot matches `node`, by the columns; undefined where some leaf has no column check. */
function slotCheck(columns: StorefrontColumns, node: FilterExpr): ColumnCheck | undefined {
  switch (node.type) {
    case 'and':
    case 'or': {
      const parts = node.operands.map((operand) => slotCheck(columns, operand));
      if (parts.some((part) => part === undefined)) return undefined;
      const checks = (parts as ColumnCheck[]).map((part) => part.check);
      const reads = (parts as ColumnCheck[]).reduce((sum, part) => sum + part.reads, 0);
      return node.type === 'and' ? { check: (slot) => checks.every((check) => check(slot)), reads } : { check: (slot) => checks.some((check) => check(slot)), reads };
    }
    case 'not': {
      const part = slotCheck(columns, node.operand);
      return part === undefined ? undefined : { check: (slot) => !part.check(slot), reads: part.reads };
    }
    case 'compare':
    case 'in': {
      const available = availableSide(node);
      if (available !== undefined) {
        const bits = columns.available.data;
        return { check: (slot) => hasBit(bits, slot) === available, reads: 1, streams: true };
      }
      return columnCheck(columns, node);
    }
  }
}

function isAscending(slots: Int32Array): boolean {
  for (let at = 1; at < slots.length; at += 1) if (slots[at]! <= slots[at - 1]!) return false;
  return true;
}

/** The distinct slots of `slots`, ascending (a copy). */
function distinctAscending(slots: Int32Array): Int32Array {
  const sorted = Int32Array.from(slots).sort();
  let kept = 0;
  for (let at = 0; at < sorted.length; at += 1) if (at === 0 || sorted[at] !== sorted[at - 1]) sorted[kept++] = sorted[at]!;
  return sorted.subarray(0, kept);
}

/**
 * The page of `matches` (distinct slots, ascending) in the search's order: by cursor, or by the
 * sort's column with ties by cursor (a descending sort is the ascending order read backwards, as
 * sort-orders.ts reads it).
 */
function pageOfSlots(columns: StorefrontColumns, search: PageRequest, matches: Int32Array, key: ReturnType<typeof sortKeyOf>): { cursors: number[]; total: number } {
  const total = matches.length;
  const end = Math.min(total, search.offset + search.limit);
  const cursorOf = columns.cursor.data;
  let ordered: Int32Array = matches;
  if (key !== undefined) {
    const column = columns.numbers[key.field].data;
    ordered = Int32Array.from(matches).sort((a, b) => column[a]! - column[b]! || a - b);
  }
  const descending = key === undefined ? search.sort === 'cursor:desc' : key.descending;
  const cursors: number[] = [];
  for (let position = search.offset; position < end; position += 1) cursors.push(cursorOf[ordered[descending ? total - 1 - position : position]!]!);
  return { cursors, total };
}
