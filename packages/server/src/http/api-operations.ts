import { operations, type ApiOperationId } from '@catalog/contract';

/** The operations the API listener serves (the stream has its own server). */
export const API_OPERATION_IDS = (Object.keys(operations) as (keyof typeof operations)[]).filter(
  (id): id is ApiOperationId => operations[id].listener === 'api',
);
