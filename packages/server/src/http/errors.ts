// The one table from contract error codes to HTTP statuses, and the one error body. Every layer
// (routing, validation, auth, rate limiting, handlers, crashes) answers through here.
import { CatalogError, type ErrorCode } from '../catalog/errors.ts';
import type { ErrorBody } from '@catalog/contract';

export const STATUS_BY_CODE = {
  invalid_request: 400,
  invalid_filter: 400,
  page_out_of_range: 400,
  invalid_topics: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  rate_limited: 429,
  too_many_streams: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const satisfies Record<ErrorCode, number>;

/** Seconds a client should wait after a 503 before retrying. */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

export const INTERNAL_ERROR_MESSAGE = 'Something went wrong on our side; quote the X-Request-Id when reporting it.';

/** A refusal decided by the transport itself, with the headers its status requires. */
export class HttpRefusal extends CatalogError {
  readonly headers: Readonly<Record<string, string>>;
  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(code, message);
    this.headers = headers;
  }
}

export function errorBody(code: ErrorCode, message: string, query: Record<string, string>): ErrorBody {
  return { status: 'error', error: code, message, query, data: null, meta: null };
}

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** True when the error was not a documented refusal and must be logged. */
  unexpected: boolean;
}

/** Maps anything thrown to its documented response; unknown errors become an opaque 500. */
export function toErrorResponse(error: unknown, query: Record<string, string>): ErrorResponse {
  if (error instanceof CatalogError) {
    const headers: Record<string, string> = error instanceof HttpRefusal ? { ...error.headers } : {};
    if (error.code === 'service_unavailable' && headers['retry-after'] === undefined) {
      headers['retry-after'] = String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS);
    }
    return { status: STATUS_BY_CODE[error.code], body: errorBody(error.code, error.message, query), headers, unexpected: false };
  }
  return {
    status: 500,
    body: errorBody('internal_error', INTERNAL_ERROR_MESSAGE, query),
    headers: {},
    unexpected: true,
  };
}
