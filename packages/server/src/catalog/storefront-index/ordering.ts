// Comparisons of a range leaf, and orders of slots by value (ties by slot).

export type RangeOperator = '<' | '<=' | '>' | '>=';


/** Whether `own` compares to `value` as `operator` says (NaN: never). */
export function compares(own: number, operator: RangeOperator, value: number): boolean {
  return operator === '<' ? own < value : operator === '<=' ? own <= value : operator === '>' ? own > value : own >= value;
}

/**
 * The places of `slots` (0 to its length) in ascending order of (value, slot), `values[place]`
 * being the value of `slots[place]`, read once by the caller: a comparator reading a large column
 * would miss the cache at every step.
 */
export function valueOrder(slots: Int32Array, values: Float64Array): Int32Array {
  return Int32Array.from(slots, (_, at) => at).sort((a, b) => values[a]! - values[b]! || slots[a]! - slots[b]!);
}

/**
 * Where in `sorted` (slots ascending by their value in `column`, no NaN) the members that compare
 * to `value` as `operator` says meet the others, by binary search: those before it pass `<` and
 * `<=`, those from it on pass `>` and `>=`.
 */
export function passingBoundary(sorted: Int32Array, column: Float64Array, operator: RangeOperator, value: number): number {
  // For `<` and `>=` the first position at or above `value`, for `<=` and `>` the first above it.
  const firstAbove = operator === '<=' || operator === '>';
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const own = column[sorted[middle]!]!;
    if (firstAbove ? own <= value : own < value) low = middle + 1;
    else high = middle;
  }
  return low;
}
