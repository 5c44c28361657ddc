// Domain errors know nothing of HTTP: each carries a code from the contract's error catalogue, and
// the transport's one table (src/http/errors.ts) maps the code to a status.
import type { ErrorBody } from '@catalog/contract';

export type ErrorCode = ErrorBody['error'];

export class CatalogError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A filter expression failed to lex, parse or type-check; `position` is 1-based. */
export class InvalidFilter extends CatalogError {
  readonly position: number;
  constructor(position: number, problem: string) {
    super('invalid_filter', `Invalid filter at position ${position}: ${problem}`);
    this.position = position;
  }
}

export class InvalidRequest extends CatalogError {
  constructor(message: string) {
    super('invalid_request', message);
  }
}

export class PageOutOfRange extends CatalogError {
  /** `page` as the request wrote it, or the number. */
  constructor(page: number | string, maxPages: number) {
    super(
      'page_out_of_range',
      `Page ${page} is beyond the ${maxPages}-page limit. To continue, filter with "cursor > <cursor of the last item received>" (sorted by cursor) and start again at page 1.`,
    );
  }
}

export class ProductNotFound extends CatalogError {
  constructor(idOrSlug: string) {
    super('not_found', `No product has the id or slug "${idOrSlug}".`);
  }
}

/** This instance has begun to shut down (SIGTERM): not ready; callers retry on another one. */
export class ShuttingDown extends CatalogError {
  constructor() {
    super('service_unavailable', 'This instance is shutting down; retry shortly (on another instance).');
  }
}

/** A backing service (database, price log) cannot be reached; callers may retry. */
export class ServiceUnavailable extends CatalogError {
  constructor(what: string, options?: ErrorOptions) {
    super('service_unavailable', `The ${what} is unavailable; retry shortly.`, options);
  }
}

/**
 * A part of this instance is still starting (the storefront index loading): not ready yet, an
 * expected state rather than a failure, so readiness checks say so without logging it as one.
 */
export class StillStarting extends ServiceUnavailable {}

/**
 * A write failed because the storage is full (store/storage-full.ts tells): retrying cannot help
 * until space is freed. `disk` names what is full, for the operator.
 */
export class StorageFull extends ServiceUnavailable {
  readonly disk: string;
  constructor(what: string, disk: string, options?: ErrorOptions) {
    super(what, options);
    this.disk = disk;
    const reason = options?.cause instanceof Error ? ` (${options.cause.message})` : '';
    this.message = `The ${what} cannot be written: ${disk} is full${reason}. Free space there, then retry.`;
  }
}
