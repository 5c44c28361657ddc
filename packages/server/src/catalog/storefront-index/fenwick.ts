// Two-dimensional Fenwick trees (binary indexed trees) in one Int32Array: row r, column c (both
// 1-based) at r × width + c. Adding to a cell and summing a prefix rectangle each read or write
// O(log rows × log width) entries.

/** Turns per-cell counts (rows 1 .. rows, columns 1 .. width - 1, row r at r × width) into a two-dimensional Fenwick tree of them, in place. */
export function toFenwick(tree: Int32Array, rows: number, width: number): void {
  for (let row = 1; row <= rows; row += 1) {
    for (let column = 1; column < width; column += 1) {
      const parent = column + (column & -column);
      if (parent < width) tree[row * width + parent]! += tree[row * width + column]!;
    }
  }
  for (let row = 1; row <= rows; row += 1) {
    const parent = row + (row & -row);
    if (parent > rows) continue;
    for (let column = 1; column < width; column += 1) tree[parent * width + column]! += tree[row * width + column]!;
  }
}

/** Adds `delta` to cell (row, column), 1-based, of a Fenwick tree of `rows` rows. */
export function fenwickAdd(tree: Int32Array, rows: number, width: number, row: number, column: number, delta: number): void {
  for (let r = row; r <= rows; r += r & -r) for (let c = column; c < width; c += c & -c) tree[r * width + c]! += delta;
}

/** The sum of the cells in rows 1 .. `rows` and columns 1 .. `columns` of a Fenwick tree (none when either is 0 or less). */
export function fenwickSum(tree: Int32Array, width: number, rows: number, columns: number): number {
  let sum = 0;
  for (let r = rows; r > 0; r -= r & -r) for (let c = columns; c > 0; c -= c & -c) sum += tree[r * width + c]!;
  return sum;
}
