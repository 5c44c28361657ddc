// The pure server-sent-events encoder: domain values in, the exact bytes of each frame out
// (https://html.spec.whatwg.org/multipage/server-sent-events.html). A data value with line breaks
// becomes several `data:` lines, which a client joins back with "\n"; single-line fields (`id`,
// `event`) cannot carry a line break, so CR and LF there are replaced by spaces rather than let a
// value forge extra fields.

const LINE_BREAK = /\r\n|\r|\n/;

function singleLine(value: string): string {
  return value.replace(/[\r\n]/g, ' ');
}

function dataLines(data: string): string {
  return data
    .split(LINE_BREAK)
    .map((line) => `data: ${line}\n`)
    .join('');
}

/** `retry: <ms>`: how long a client waits before reconnecting. */
export function encodeRetry(ms: number): string {
  return `retry: ${Math.max(0, Math.trunc(ms))}\n\n`;
}

export function encodeEvent(frame: { id: number; event: string; data: string }): string {
  return `id: ${frame.id}\nevent: ${singleLine(frame.event)}\n${dataLines(frame.data)}\n`;
}

/**
 * A comment (ignored by clients), one `: ` line per line of text, then a blank line; used as the
 * heartbeat. The blank line matters: readers that act only on a complete frame (a blank line)
 * would otherwise never notice a heartbeat, and a quiet stream would look dead to them.
 */
export function encodeComment(text: string): string {
  return `${text
    .split(LINE_BREAK)
    .map((line) => `: ${line}\n`)
    .join('')}\n`;
}

/** The `reset` frame: events between the requested id and `oldest_id` are gone. It has no id. */
export function encodeReset(notice: { requested_id: number; oldest_id: number }): string {
  return `event: reset\n${dataLines(JSON.stringify({ requested_id: notice.requested_id, oldest_id: notice.oldest_id }))}\n`;
}
