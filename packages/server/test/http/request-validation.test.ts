// http/request-validation.ts on its own: what a handler is handed for a valid request, and the one
// refusal a client gets for each kind of invalid parameter. Each test builds its validator: the
// contract's parameter tables are read while building, so a test that reuses a shared validator
// would not exercise them.
import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { OperationId } from '@catalog/contract';
import { CatalogError } from '../../src/catalog/errors.ts';
import { createRequestValidator } from '../../src/http/request-validation.ts';

function validate(operationId: OperationId, path: Record<string, string>, query: Record<string, string>, headers: IncomingHttpHeaders = {}) {
  return createRequestValidator([operationId])(operationId, path, query, headers);
}

function refusal(operationId: OperationId, path: Record<string, string>, query: Record<string, string>, headers: IncomingHttpHeaders = {}) {
  try {
    validate(operationId, path, query, headers);
  } catch (error) {
    if (error instanceof CatalogError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('the request was accepted');
}

const TOPICS = 'price:marketplacea:us';

describe('createRequestValidator', () => {
  describe('accepted requests', () => {
    it('hands over integers as numbers with the defaults filled in, and text as sent', () => {
      expect(validate('listStorefrontProducts', {}, { page: '2', query: 'air jordan' })).toStrictEqual({
        query: { page: 2, query: 'air jordan', sort: 'cursor:asc', limit: 20 },
        params: {},
        headers: {},
      });
    });

    it('hands over only the header parameters that were sent, under the contract spelling', () => {
      // `ignored` is a query parameter of streamPrices: a request header of that name is not one of its headers.
      expect(validate('streamPrices', {}, {}, { topics: TOPICS, host: 'localhost', ignored: 'header' })).toStrictEqual({
        query: {},
        params: {},
        headers: { Topics: TOPICS },
      });
      expect(validate('streamPrices', {}, {}, { topics: TOPICS, filter: 'price < 200', 'last-event-id': '42' }).headers).toStrictEqual({
        Topics: TOPICS,
        Filter: 'price < 200',
        'Last-Event-ID': '42',
      });
    });

    it('accepts any query parameter of the stream, one named like its free-form parameter included, and hands them over as sent', () => {
      expect(validate('streamPrices', {}, { ignored: 'x', lastEventId: '5' }, { topics: TOPICS }).query).toStrictEqual({ ignored: 'x', lastEventId: '5' });
      expect(validate('streamPrices', {}, { lastEventId: '5' }, { topics: TOPICS }).query).toStrictEqual({ lastEventId: '5' });
    });
  });

  describe('refusals', () => {
    it('refuses an integer query parameter not written in decimal digits, quoting at most 60 characters of it', () => {
      expect(refusal('listStorefrontProducts', {}, { page: '0x10' })).toEqual({
        code: 'invalid_request',
        message: 'Query parameter "page" must be an integer, got "0x10".',
      });
      const sixty = `${'9'.repeat(59)}x`;
      expect(refusal('searchVariants', {}, { limit: sixty }).message).toBe(`Query parameter "limit" must be an integer, got "${sixty}".`);
      expect(refusal('searchVariants', {}, { limit: `${sixty}0` }).message).toBe(`Query parameter "limit" must be an integer, got "${sixty}…".`);
    });

    it('quotes at most 60 characters of a query value the schema refuses', () => {
      expect(refusal('listStorefrontProducts', {}, { query: 'a'.repeat(201) })).toEqual({
        code: 'invalid_request',
        message: `Query parameter "query" must be at most 200 characters long, got "${'a'.repeat(60)}…".`,
      });
      const sixty = '1'.repeat(60);
      expect(refusal('searchVariants', {}, { gtin: sixty }).message).toBe(
        `Query parameter "gtin" must match the pattern ^[0-9]{4,14}$ (Digits to find inside stored GTINs; at least 4, at most 14), got "${sixty}".`,
      );
    });

    it('refuses storefront page 51 with the cursor recipe, and other page bounds with the bound', () => {
      expect(refusal('listStorefrontProducts', {}, { page: '51' })).toEqual({
        code: 'page_out_of_range',
        message: 'Page 51 is beyond the 50-page limit. To continue, filter with "cursor > <cursor of the last item received>" (sorted by cursor) and start again at page 1.',
      });
      // A page past the safe integers, or past Infinity as a number, is named as sent.
      expect(refusal('listStorefrontProducts', {}, { page: '0099999999999999999999' }).message).toMatch(/^Page 99999999999999999999 is beyond/u);
      expect(refusal('listStorefrontProducts', {}, { page: '1005' }).message).toMatch(/^Page 1005 is beyond/u);
      expect(refusal('listStorefrontProducts', {}, { page: '9'.repeat(400) }).message).toMatch(new RegExp(`^Page ${'9'.repeat(60)}… is beyond`, 'u'));
      expect(refusal('listStorefrontProducts', {}, { page: '0' })).toEqual({ code: 'invalid_request', message: 'Query parameter "page" must be >= 1, got "0".' });
      expect(refusal('searchVariants', {}, { page: '1000001' })).toEqual({ code: 'invalid_request', message: 'Query parameter "page" must be <= 1000000, got "1000001".' });
    });

    it('names a missing header as the contract spells it, with the code the contract gives it', () => {
      expect(refusal('streamPrices', {}, {}, {})).toEqual({ code: 'invalid_topics', message: 'Header "Topics" is missing; it is required.' });
      expect(refusal('streamPrices', {}, {}, { topics: '' })).toEqual({ code: 'invalid_topics', message: 'Header "Topics" is empty; send a value.' });
    });

    it('explains an empty header that fails a pattern by the pattern, not as empty', () => {
      expect(refusal('streamPrices', {}, {}, { topics: TOPICS, 'last-event-id': '' })).toEqual({
        code: 'invalid_request',
        message: 'Header "Last-Event-ID" must match the pattern ^[0-9]{1,16}$ (The `id` of the last event processed; the stream replays every retained event after it).',
      });
    });

    it('quotes no query value when refusing a path parameter of the same name', () => {
      expect(refusal('getProduct', { id: 'x'.repeat(1001) }, { id: 'q' })).toEqual({
        code: 'invalid_request',
        message: 'Path parameter "id" must be at most 1000 characters long.',
      });
    });
  });
});
