// The stream against AsyncAPI (issue 6 item 5). Known price events are published with the CLI into
// a fresh price log, then a finite session is read from the real stream server (replay from a known
// id, read until the expected number of frames, abort). Every frame's event name, id and data must
// validate against the AsyncAPI messages, and the frames (heartbeat comments and `retry:` removed,
// `retry: 2000` asserted on its own) must equal the golden transcript in specs/streams/ byte for byte.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlitePriceLog } from '../../server/src/prices/sqlite/sqlite-price-log.ts';
import { toNdjson } from './support/fixtures.ts';
import { BASIC_DELIVERED_IDS, BASIC_EVENTS, BASIC_TOPICS, RESET_EVENT_COUNT, RESET_TOPICS, RETAINED, resetEvents } from './support/price-events.ts';
import { createKey, publishPrices, type RunningServer, serve, type Workspace, workspace } from './support/server.ts';
import { normaliseTranscript, parseSse, SPECS_DIR, validateFrame, validateResponse } from './support/spec.ts';

interface Session {
  status: number;
  headers: Headers;
  text: string;
}

/** Reads a stream until it holds `frames` frames (heartbeats and retry excluded), then aborts it. */
async function readSession(streamUrl: string, headers: Record<string, string>, frames: number, timeoutMs = 20_000): Promise<Session> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  let text = '';
  try {
    const response = await fetch(`${streamUrl}/v1/stream`, { headers, signal: controller.signal });
    if (response.body === null || response.status !== 200) return { status: response.status, headers: response.headers, text: await response.text() };
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    try {
      while (parseSse(text).frames.length < frames) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
      throw new Error(`stream gave ${parseSse(text).frames.length} of ${frames} frames within ${timeoutMs} ms:\n${text.slice(0, 2000)}`, { cause: error });
    }
    await reader.cancel();
    return { status: response.status, headers: response.headers, text };
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

const golden = (name: string) => readFileSync(join(SPECS_DIR, 'streams', name), 'utf8');

describe('streamPrices against AsyncAPI', () => {
  let ws: Workspace;
  const servers: RunningServer[] = [];

  async function freshStream(name: string, events: readonly unknown[]): Promise<{ server: RunningServer; proKey: string }> {
    const file = join(ws.dir, `${name}.db`);
    const db = `sqlite:${file}`;
    // The golden transcripts number events from 1: a log whose counter starts at 0 (a new log
    // starts at its creation time in ms × 1000, which no transcript could hold).
    await new SqlitePriceLog(file, { newLogCounter: 0 }).close();
    const proKey = await createKey(db, 'pro');
    await publishPrices(db, ws.file(`${name}.ndjson`, toNdjson(events)));
    // Heartbeats are normalised away, but a long interval keeps the transcript small.
    const server = await serve(db, ['--heartbeat-ms', '600000']);
    servers.push(server);
    return { server, proKey };
  }

  beforeAll(() => {
    ws = workspace('stream');
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    ws.dispose();
  });

  it('replays a session from Last-Event-ID 0 exactly as specs/streams/replay-basic.sse', async () => {
    const { server, proKey } = await freshStream('basic', BASIC_EVENTS);
    const session = await readSession(server.streamUrl, { Authorization: `Bearer ${proKey}`, Topics: BASIC_TOPICS, 'Last-Event-ID': '0' }, BASIC_DELIVERED_IDS.length);
    expect(session.status, session.text).toBe(200);
    expect(validateResponse('streamPrices', 200, session.headers, '')).toEqual([]);
    expect(session.headers.get('cache-control')).toBe('no-store');
    const { frames, retry } = parseSse(session.text);
    expect(session.text.startsWith('retry: 2000\n')).toBe(true);
    expect(retry).toEqual(['2000']);
    for (const frame of frames) expect(validateFrame(frame), JSON.stringify(frame)).toEqual([]);
    expect(frames.map((f) => Number(f.id))).toEqual(BASIC_DELIVERED_IDS);
    expect(normaliseTranscript(session.text)).toBe(golden('replay-basic.sse'));
  }, 60_000);

  it('applies Filter to the replay, skipping the ids it does not match, exactly as specs/streams/replay-filtered.sse', async () => {
    const { server, proKey } = await freshStream('filtered', BASIC_EVENTS);
    const filter = 'price < 180';
    const delivered = BASIC_DELIVERED_IDS.filter((id) => BASIC_EVENTS[id - 1]!.price < 180);
    const session = await readSession(server.streamUrl, { Authorization: `Bearer ${proKey}`, Topics: BASIC_TOPICS, Filter: filter, 'Last-Event-ID': '0' }, delivered.length);
    expect(session.status, session.text).toBe(200);
    const { frames } = parseSse(session.text);
    for (const frame of frames) expect(validateFrame(frame), JSON.stringify(frame)).toEqual([]);
    expect(frames.map((f) => Number(f.id))).toEqual(delivered);
    expect(normaliseTranscript(session.text)).toBe(golden('replay-filtered.sse'));
  }, 60_000);

  it(`starts with event: reset when Last-Event-ID is older than the ${RETAINED} retained events, as specs/streams/replay-reset.sse`, async () => {
    const { server, proKey } = await freshStream('reset', resetEvents());
    const expected = RETAINED + 1;
    const session = await readSession(server.streamUrl, { Authorization: `Bearer ${proKey}`, Topics: RESET_TOPICS, 'Last-Event-ID': '1' }, expected, 40_000);
    expect(session.status, session.text).toBe(200);
    const { frames } = parseSse(session.text);
    expect(frames).toHaveLength(expected);
    for (const frame of frames) {
      const violations = validateFrame(frame);
      if (violations.length > 0) expect(violations, JSON.stringify(frame)).toEqual([]);
    }
    expect(frames[0]?.event).toBe('reset');
    const ids = frames.slice(1).map((f) => Number(f.id));
    expect(ids[0]).toBe(RESET_EVENT_COUNT - RETAINED + 1);
    expect(ids.at(-1)).toBe(RESET_EVENT_COUNT);
    expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] ?? 0))).toBe(true);
    const expectedPrefix = golden('replay-reset.sse');
    const blocks = expectedPrefix.split('\n\n').filter((b) => b !== '').length;
    const prefix = normaliseTranscript(session.text).split('\n\n').slice(0, blocks).map((b) => `${b}\n\n`).join('');
    expect(prefix).toBe(expectedPrefix);
  }, 90_000);
});

describe('golden transcripts', () => {
  for (const name of ['replay-basic.sse', 'replay-filtered.sse', 'replay-reset.sse']) {
    it(`${name} holds only frames the AsyncAPI document allows, ids increasing`, () => {
      const { frames, retry } = parseSse(golden(name));
      expect(retry).toEqual([]);
      expect(frames.length).toBeGreaterThan(0);
      for (const frame of frames) expect(validateFrame(frame), JSON.stringify(frame)).toEqual([]);
      const ids = frames.filter((f) => f.id !== undefined).map((f) => Number(f.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(normaliseTranscript(golden(name))).toBe(golden(name));
    });
  }
});

