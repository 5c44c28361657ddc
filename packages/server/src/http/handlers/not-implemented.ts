// What a handler stub written by `pnpm generate` (scripts/generate-handlers.ts) answers until its body
// is written: the documented 503 `service_unavailable`, with Retry-After like every 503. Every
// operation documents 503, and the contract has no 501 or `not_implemented` code, so this is the
// one documented answer that says "not now" without blaming the caller or hiding behind a 500.
import type { OperationId } from '@catalog/contract';
import { CatalogError } from '../../catalog/errors.ts';

export class NotImplemented extends CatalogError {
  readonly operationId: OperationId;
  constructor(operationId: OperationId) {
    super('service_unavailable', `${operationId} is not implemented yet.`);
    this.operationId = operationId;
  }
}

export function notImplemented(operationId: OperationId): never {
  throw new NotImplemented(operationId);
}
