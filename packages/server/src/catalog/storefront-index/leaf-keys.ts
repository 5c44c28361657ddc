// What the index needs to know of a filter's leaves: their keys in the leaf cache, and which are
// range leaves over a number column.
import type { FilterExpr, FilterField, FilterLiteral } from '../filter/ast.ts';
import { isNumberField, type NumberField } from './columns.ts';

export type Leaf = Extract<FilterExpr, { type: 'compare' | 'in' }>;
export type Compare = Extract<FilterExpr, { type: 'compare' }>;

const RANGE_OPERATORS: ReadonlySet<string> = new Set(['<', '<=', '>', '>=']);

/**
 * The leaf cache's key of a leaf, or undefined for leaves that cost no more than copying a kept
 * bitset (`available` is a bitset already; `cursor` a run of slots). Literals keep their JSON
 * type: `"1"` and `1` are different leaves.
 */
export function leafKey(node: Leaf): string | undefined {
  if (node.field === 'available' || node.field === 'cursor') return undefined;
  return node.type === 'compare' ? `${node.field}\u0000${node.operator}\u0000${JSON.stringify(node.value)}` : `${node.field}\u0000${node.negated ? 'NOT IN' : 'IN'}\u0000${JSON.stringify(node.values)}`;
}

/** The leaf cache's key of the products having `word` (one of `wordsOf`) among their words. */
export function wordKey(word: string): string {
  return `word\u0000${word}`;
}

/** The leaf cache's key of the products of the shop named `name` (as the search gave it). */
export function shopKey(name: string): string {
  return `shop\u0000${name}`;
}

/** The leaf cache's key of the slots under `bucket` of the range index of `field`. */
export function underKey(field: NumberField, bucket: number): string {
  return `${field}\u0000under\u0000${bucket}`;
}

/** A range leaf over a number column (answered through its range index). */
export function isRangeLeaf(node: FilterExpr): node is Compare {
  return node.type === 'compare' && isNumberField(node.field) && RANGE_OPERATORS.has(node.operator);
}

/**
 * For an equality on `available` (whose bitset is the column itself, read as it is or flipped):
 * whether it selects the available products; undefined for any other node.
 */
export function availableSide(node: FilterExpr): boolean | undefined {
  if (node.type !== 'compare' || node.field !== 'available' || (node.operator !== '=' && node.operator !== '!=')) return undefined;
  return (node.value === true) === (node.operator === '=');
}

/**
 * What a key of the leaf cache names, read back from the key: a leaf (`leafKey`), a word
 * (`wordKey`), a shop (`shopKey`) or the slots under a range bucket (`underKey`).
 */
export type KeyedLeaf =
  | { kind: 'leaf'; leaf: Leaf }
  | { kind: 'word'; word: string }
  | { kind: 'shop'; name: string }
  | { kind: 'under'; field: NumberField; bucket: number };

export function keyedLeafOf(key: string): KeyedLeaf {
  const [head = '', second = '', ...rest] = key.split('\u0000');
  const tail = [second, ...rest].join('\u0000');
  if (head === 'word') return { kind: 'word', word: tail };
  if (head === 'shop') return { kind: 'shop', name: tail };
  const third = rest.join('\u0000');
  if (second === 'under' && isNumberField(head)) return { kind: 'under', field: head, bucket: Number(third) };
  const field = head as FilterField;
  if (second === 'IN' || second === 'NOT IN') return { kind: 'leaf', leaf: { type: 'in', field, values: JSON.parse(third) as FilterLiteral[], negated: second === 'NOT IN' } };
  return { kind: 'leaf', leaf: { type: 'compare', field, operator: second as Compare['operator'], value: JSON.parse(third) as FilterLiteral } };
}
