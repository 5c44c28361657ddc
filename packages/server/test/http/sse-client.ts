// A minimal server-sent-events client for tests: it keeps the raw bytes and parses frames the
// way the WHATWG EventSource does (fields, multi-line data, comments), without reconnecting.
import http from 'node:http';

export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comments: string[];
}

export interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  response: http.IncomingMessage;
  /** Every byte received so far, as UTF-8 text. */
  raw(): string;
  /** Resolves with the next `count` frames (waiting up to `timeoutMs`). */
  frames(count: number, timeoutMs?: number): Promise<SseFrame[]>;
  /** Resolves when the server ends the response cleanly; rejects if it is cut off. */
  ended(): Promise<'end' | 'aborted'>;
  close(): void;
}

export function openStream(url: string, headers: Record<string, string>, method = 'GET'): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers: { Accept: 'text/event-stream', ...headers } });
    request.on('error', reject);
    request.on('response', (response) => {
      const decoder = new TextDecoder();
      let text = '';
      let pending = '';
      const parsed: SseFrame[] = [];
      let current: SseFrame = { comments: [] };
      let waiter: (() => void) | null = null;
      let finished: Promise<'end' | 'aborted'> | null = null;
      const outcome = new Promise<'end' | 'aborted'>((done) => {
        response.on('end', () => done('end'));
        response.on('aborted', () => done('aborted'));
        response.on('error', () => done('aborted'));
        response.on('close', () => done(response.complete ? 'end' : 'aborted'));
      });
      response.on('data', (chunk: Buffer) => {
        const decoded = decoder.decode(chunk, { stream: true });
        text += decoded;
        pending += decoded;
        const lines = pending.split(/\r\n|\r|\n/);
        pending = lines.pop() ?? '';
        for (const line of lines) {
          if (line === '') {
            if (current.comments.length > 0 || Object.keys(current).length > 1) parsed.push(current);
            current = { comments: [] };
            continue;
          }
          if (line.startsWith(':')) {
            current.comments.push(line.slice(1).trimStart());
            // A comment stands alone when no field precedes it in this frame.
            if (Object.keys(current).length === 1) {
              parsed.push(current);
              current = { comments: [] };
            }
            continue;
          }
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          let value = colon === -1 ? '' : line.slice(colon + 1);
          if (value.startsWith(' ')) value = value.slice(1);
          if (field === 'data') current.data = current.data === undefined ? value : `${current.data}\n${value}`;
          else if (field === 'id' || field === 'event' || field === 'retry') current[field] = value;
        }
        waiter?.();
      });
      let taken = 0;
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        response,
        raw: () => text,
        frames: async (count, timeoutMs = 5000) => {
          const deadline = Date.now() + timeoutMs;
          while (parsed.length - taken < count) {
            const left = deadline - Date.now();
            if (left <= 0) throw new Error(`expected ${count} more frames, got ${parsed.length - taken}: ${JSON.stringify(text.slice(-500))}`);
            await new Promise<void>((wake) => {
              const timer = setTimeout(wake, left);
              waiter = () => {
                clearTimeout(timer);
                waiter = null;
                wake();
              };
              void outcome.then(() => waiter?.());
            });
            if (response.complete && parsed.length - taken < count) {
              throw new Error(`the stream ended after ${parsed.length - taken} of ${count} frames`);
            }
          }
          const out = parsed.slice(taken, taken + count);
          taken += count;
          return out;
        },
        ended: () => (finished ??= outcome),
        close: () => {
          request.destroy();
        },
      });
    });
    request.end();
  });
}
