// PLACEHOLDER owned by the storage work (issue 3): the integrator replaces this file with the real
// parser. It refuses every expression so that nothing unparsed ever reaches a store.
import { InvalidFilter } from '../errors.ts';
import type { FilterExpr } from './ast.ts';

export function parseFilter(_text: string): FilterExpr {
  throw new InvalidFilter(1, 'not implemented');
}
