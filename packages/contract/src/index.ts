// The contract in TypeScript: hey-api's types of every schema and operation, the AsyncAPI frame
// types, the operation table and the request and result types derived from them. Loading it costs
// the operation table only; the documents, Ajv and the SDK are entries of their own.
export type * from './generated/types.gen.ts';
export type * from './generated/stream.gen.ts';
import type { StorefrontProduct } from './generated/types.gen.ts';
/** A storefront product as imported (a `catalog import --kind storefront` line): the service assigns `cursor`, and timestamps where absent. */
export type StorefrontProductInput = Omit<StorefrontProduct, 'cursor' | 'created_at' | 'updated_at'> &
  Partial<Pick<StorefrontProduct, 'created_at' | 'updated_at'>>;
export { operations, projections, webhooks } from './generated/operations.gen.ts';
export type {
  ApiOperationId,
  OperationId,
  OperationRequest,
  OperationResult,
  OperationTable,
  OperationTypes,
  Plan,
  WithDefaults,
} from './operation-types.ts';
