// `pnpm mock` (next to Prism): serves the price stream from the AsyncAPI document on
// STREAM_MOCK_PORT (default 4011) until interrupted. See stream-mock.ts for what it does.
import { startStreamMock } from './stream-mock.ts';

const port = Number(process.env['STREAM_MOCK_PORT'] ?? 4011);
const mock = await startStreamMock({
  port,
  host: process.env['STREAM_MOCK_HOST'] ?? '127.0.0.1',
  heartbeatMs: Number(process.env['STREAM_MOCK_HEARTBEAT_MS'] ?? 15_000),
  eventIntervalMs: Number(process.env['STREAM_MOCK_EVENT_INTERVAL_MS'] ?? 1000),
});
console.log(`price stream mock on ${mock.url}/v1/stream (POST ${mock.url}/_mock/lose-data simulates a data loss)`);
const stop = (): void => {
  void mock.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
