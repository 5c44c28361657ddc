import { describe, expect, it } from 'vitest';
import {
  CatalogError,
  InvalidFilter,
  InvalidRequest,
  PageOutOfRange,
  ProductNotFound,
  ServiceUnavailable,
  ShuttingDown,
  StillStarting,
  StorageFull,
} from '../../src/catalog/errors.ts';
import { STATUS_BY_CODE } from '../../src/http/errors.ts';

// What a client reads of each domain error: its name, the contract code, the status the transport's
// table gives that code, and the message, word for word.
describe('catalog errors', () => {
  const cases: [string, number, () => CatalogError, string][] = [
    ['InvalidFilter', 400, () => new InvalidFilter(7, 'unknown field "colour"'), 'Invalid filter at position 7: unknown field "colour"'],
    ['InvalidRequest', 400, () => new InvalidRequest('Query parameter "page" must be an integer >= 1, got 0.'), 'Query parameter "page" must be an integer >= 1, got 0.'],
    [
      'PageOutOfRange',
      400,
      () => new PageOutOfRange(51, 50),
      'Page 51 is beyond the 50-page limit. To continue, filter with "cursor > <cursor of the last item received>" (sorted by cursor) and start again at page 1.',
    ],
    ['ProductNotFound', 404, () => new ProductNotFound('dunk-low'), 'No product has the id or slug "dunk-low".'],
    ['ShuttingDown', 503, () => new ShuttingDown(), 'This instance is shutting down; retry shortly (on another instance).'],
    ['ServiceUnavailable', 503, () => new ServiceUnavailable('price log'), 'The price log is unavailable; retry shortly.'],
    ['StillStarting', 503, () => new StillStarting('storefront index'), 'The storefront index is unavailable; retry shortly.'],
    [
      'StorageFull',
      503,
      () => new StorageFull('catalog database', '/var/lib/catalog'),
      'The catalog database cannot be written: /var/lib/catalog is full. Free space there, then retry.',
    ],
  ];

  it.each(cases)('%s is answered %i with its message', (name, status, make, message) => {
    const error = make();
    expect(error).toBeInstanceOf(CatalogError);
    expect(error.name).toBe(name);
    expect(STATUS_BY_CODE[error.code]).toBe(status);
    expect(error.message).toBe(message);
  });

  it('gives each its own code', () => {
    expect(cases.map(([, , make]) => make().code)).toStrictEqual([
      'invalid_filter',
      'invalid_request',
      'page_out_of_range',
      'not_found',
      'service_unavailable',
      'service_unavailable',
      'service_unavailable',
      'service_unavailable',
    ]);
  });

  it('keeps the 1-based position of an invalid filter', () => {
    expect(new InvalidFilter(12, 'unterminated string').position).toBe(12);
  });

  it('keeps the cause of an unavailable service', () => {
    const outage = new Error('connect ECONNREFUSED');
    expect(new ServiceUnavailable('catalog database', { cause: outage }).cause).toBe(outage);
  });

  it('names the full disk and the cause of a full storage, which is still a service unavailable', () => {
    const cause = new Error('database or disk is full');
    const full = new StorageFull('catalog database', 'the disk holding /data/catalog.db', { cause });
    expect(full).toBeInstanceOf(ServiceUnavailable);
    expect(full.disk).toBe('the disk holding /data/catalog.db');
    expect(full.cause).toBe(cause);
    expect(full.message).toBe('The catalog database cannot be written: the disk holding /data/catalog.db is full (database or disk is full). Free space there, then retry.');
    // A cause that is not an Error adds nothing to the message.
    expect(new StorageFull('catalog database', '/data', { cause: 'ENOSPC' }).message).toBe('The catalog database cannot be written: /data is full. Free space there, then retry.');
  });
});
