// What the contract says about a stream request that the topic rule and the stream mock need, read
// from the OpenAPI document's `streamPrices` operation and the PriceEvent schema, so that a limit
// or source changed in specs/ changes what the stream and the stream mock accept, with no second
// definition anywhere.
// The headers' schemas themselves are enforced by the request pipeline's contract validation.
// Fails at start-up, not per request, when the document no longer has what is read.
import { openapiDocument } from '../generated/openapi.gen.ts';

interface StringSchema {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  enum?: readonly string[];
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: StringSchema;
}

const document = openapiDocument as {
  paths: Record<string, { get?: { operationId?: string; parameters?: Parameter[] } }>;
  components: { schemas: Record<string, { properties?: Record<string, StringSchema> }> };
};

function streamHeader(name: string): Parameter {
  const operation = Object.values(document.paths).find((path) => path.get?.operationId === 'streamPrices')?.get;
  const header = operation?.parameters?.find((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === name.toLowerCase());
  if (header === undefined) throw new Error(`the contract's streamPrices operation has no ${name} header`);
  return header;
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the contract does not state ${what}`);
  return value;
}

/** The `Topics` header's length limit. */
export const TOPICS_HEADER_MAX_LENGTH = required(streamHeader('Topics').schema.maxLength, 'the Topics header maxLength');

/** The price sources topics may name: the PriceEvent `source` values. */
export const PRICE_SOURCES: readonly string[] = required(document.components.schemas['PriceEvent']?.properties?.['source']?.enum, 'the PriceEvent source values');

/** The `Last-Event-ID` header's pattern (an event id). */
export const LAST_EVENT_ID_PATTERN = new RegExp(required(streamHeader('Last-Event-ID').schema.pattern, 'the Last-Event-ID pattern'));
