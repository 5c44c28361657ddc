// TurnBatches on its own: requests of one turn answered together, batch size and in-flight bounds.
import { describe, expect, it } from 'vitest';
import { TurnBatches } from '../../src/store/postgres/turn-batches.ts';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('TurnBatches', () => {
  it('answers the requests of one turn together, in order, at most maxBatch at a time', async () => {
    const batches: number[][] = [];
    const batching = new TurnBatches<number>(async (batch) => void batches.push(batch), { maxBatch: 3 });
    for (let i = 1; i <= 7; i++) batching.push(i);
    expect(batches).toEqual([]);
    for (let i = 0; i < 5; i++) await turn();
    expect(batches).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });

  it('runs at most maxInFlight answers at once, and takes up the waiting requests as one finishes', async () => {
    const open: { batch: number[]; finish: () => void }[] = [];
    const batching = new TurnBatches<number>((batch) => new Promise<void>((finish) => open.push({ batch, finish })), { maxBatch: 2, maxInFlight: 2 });
    for (let i = 1; i <= 7; i++) batching.push(i);
    for (let i = 0; i < 5; i++) await turn();
    expect(open.map((answer) => answer.batch)).toEqual([[1, 2], [3, 4]]);
    open[0]!.finish();
    for (let i = 0; i < 5; i++) await turn();
    expect(open.map((answer) => answer.batch)).toEqual([[1, 2], [3, 4], [5, 6]]);
    batching.push(8);
    for (let i = 0; i < 5; i++) await turn();
    expect(open).toHaveLength(3);
    open[1]!.finish();
    open[2]!.finish();
    for (let i = 0; i < 5; i++) await turn();
    expect(open.map((answer) => answer.batch).slice(3)).toEqual([[7, 8]]);
  });
});
