// A `write` for createLogger that batches lines: one access log line per request would otherwise
// cost one synchronous write(2) per request on stderr (files and pipes are synchronous in Node),
// which measured about a fifth of getProduct's CPU. Lines are written together once per event-loop
// turn, or at once when 64 KiB are pending, and flushed synchronously on process exit. A SIGKILL
// loses at most the current turn's lines.
import { writeSync } from 'node:fs';

const FLUSH_BYTES = 64 * 1024;

export function createBufferedLogWrite(fd: number = process.stderr.fd): (line: string) => void {
  let pending: string[] = [];
  let pendingBytes = 0;
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    pendingBytes = 0;
    try {
      writeSync(fd, text);
    } catch {
      // A closed or full stderr must never take the service down; the lines are dropped.
    }
  };
  process.once('exit', flush);
  return (line) => {
    pending.push(line);
    pendingBytes += line.length;
    if (pendingBytes >= FLUSH_BYTES) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}
