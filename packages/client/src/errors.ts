import type { ErrorBody } from '@catalog/contract/types';

/** The machine-readable codes of the contract's error body. */
export type ErrorCode = ErrorBody['error'];

const ERROR_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'invalid_request',
  'invalid_filter',
  'page_out_of_range',
  'invalid_topics',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'rate_limited',
  'too_many_streams',
  'internal_error',
  'service_unavailable',
]);

/** What the error body's `error` would have been, for answers that did not carry one (a proxy's HTML page). */
function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 400:
      return 'invalid_request';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 429:
      return 'rate_limited';
    case 502:
    case 503:
    case 504:
      return 'service_unavailable';
    default:
      return 'internal_error';
  }
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const body = value as Record<string, unknown>;
  return body['status'] === 'error' && typeof body['error'] === 'string' && ERROR_CODES.has(body['error']) && typeof body['message'] === 'string';
}

interface ErrorDetails {
  status: number;
  body: unknown;
  requestId: string | undefined;
  /** The answer's `Retry-After`, in milliseconds. */
  retryAfterMs?: number | undefined;
}

function describeError({ status, body }: ErrorDetails): { code: ErrorCode; message: string; errorBody: ErrorBody | undefined } {
  if (isErrorBody(body)) return { code: body.error, message: body.message, errorBody: body };
  const text = typeof body === 'string' ? body.trim().slice(0, 200) : '';
  return { code: codeForStatus(status), message: text === '' ? `HTTP ${status} without an error body` : `HTTP ${status}: ${text}`, errorBody: undefined };
}

/**
 * A catalog operation was refused: `code` is the error body's `error`, `status` the HTTP status and
 * `requestId` the `X-Request-Id` to quote when reporting it. Network failures are not wrapped: they
 * reject with the `fetch` implementation's own error.
 */
export class CatalogApiError extends Error {
  override readonly name: string = 'CatalogApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly requestId: string | undefined;
  /** The error body as received, when the answer carried one. */
  readonly body: ErrorBody | undefined;

  constructor(details: ErrorDetails) {
    const { code, message, errorBody } = describeError(details);
    super(message);
    this.code = code;
    this.status = details.status;
    this.requestId = details.requestId;
    this.body = errorBody;
  }
}

/**
 * The stream server refused the subscription. For good (400 `invalid_topics`, 401, 403, or another
 * 4xx that retrying cannot fix): `priceStream` throws it at once instead of reconnecting. For now
 * (429 `too_many_streams` when the key holds its maximum of concurrent streams, 503): it is passed
 * to `onReconnect` and the stream retries, not before `retryAfterMs`. It is a CatalogApiError too,
 * so one `instanceof CatalogApiError` check handles every refusal.
 */
export class PriceStreamError extends CatalogApiError {
  override readonly name: string = 'PriceStreamError';
  /** How long the server asked to wait (`Retry-After`), in milliseconds, when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(details: ErrorDetails) {
    super(details);
    this.retryAfterMs = details.retryAfterMs;
  }
}

export function parseBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
