// Structured logs through pino, one JSON object per line on stderr (stdout stays free for command
// output such as a created key), behind the small Logger interface the code uses.
// - errors (in `error` or `err`) are serialised with their `cause` chain, `code` and stack;
// - values pino cannot print as JSON (cycles, BigInt) never make a log call throw;
// - an `authorization` field, at any of the shapes requests are logged in, is redacted;
// - the request id is always `request_id`.
// Levels below LOG_LEVEL are dropped. On a terminal, createServiceLogger prints readable lines.
import { writeSync } from 'node:fs';
import pinoPretty from 'pino-pretty';
import { pino, stdSerializers, type DestinationStream, type Logger as Pino } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

const CENSOR = '[redacted]';

export function createLogger(
  options: { level?: LogLevel; base?: LogFields; write?: (line: string) => void; destination?: DestinationStream } = {},
): Logger {
  const destination: DestinationStream = options.destination ?? { write: options.write ?? ((line: string) => process.stderr.write(line)) };
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: options.base ?? {},
      timestamp: isoTime,
      formatters: { level: (label) => ({ level: label }), log: withoutAuthorization, bindings: withoutAuthorization },
      serializers: { error: stdSerializers.errWithCause, err: stdSerializers.errWithCause },
    },
    destination,
  );
  return new PinoLogger(logger);
}

/**
 * The fields with every Authorization value replaced, at each shape requests are logged in:
 * `authorization`, `<field>.authorization` and `<field>.headers.authorization`. The fields
 * themselves when there is none (the common case costs one look at each field); a copy along the
 * way to each one found otherwise: the caller's objects are never changed. Written for the log
 * path rather than pino's `redact` option, whose wildcard paths walked every line's fields at a
 * cost above an access line's own.
 */
export function withoutAuthorization(fields: LogFields): LogFields {
  let out = fields;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    let replaced: unknown = value;
    if (key === 'authorization') replaced = CENSOR;
    else if (typeof value === 'object' && value !== null) replaced = nestedWithoutAuthorization(value as LogFields);
    if (replaced !== value) {
      if (out === fields) out = { ...fields };
      out[key] = replaced;
    }
  }
  return out;
}

function nestedWithoutAuthorization(value: LogFields): LogFields {
  let out = value;
  if (Object.hasOwn(value, 'authorization')) out = { ...value, authorization: CENSOR };
  const headers = value['headers'];
  if (typeof headers === 'object' && headers !== null && Object.hasOwn(headers, 'authorization')) {
    out = { ...out, headers: { ...(headers as LogFields), authorization: CENSOR } };
  }
  return out;
}

/** pino's `isoTime`, formatted once per millisecond: lines logged in the same one share the text. */
let timeMs = -1;
let timeText = '';
function isoTime(): string {
  const now = Date.now();
  if (now !== timeMs) {
    timeMs = now;
    timeText = `,"time":"${new Date(now).toISOString()}"`;
  }
  return timeText;
}

/** One object per child, methods on the prototype: a child per request or stream stays cheap. */
class PinoLogger implements Logger {
  readonly #pino: Pino;

  constructor(logger: Pino) {
    this.#pino = logger;
  }

  debug(message: string, fields?: LogFields): void {
    this.#pino.debug(fields ?? {}, message);
  }

  info(message: string, fields?: LogFields): void {
    this.#pino.info(fields ?? {}, message);
  }

  warn(message: string, fields?: LogFields): void {
    this.#pino.warn(fields ?? {}, message);
  }

  error(message: string, fields?: LogFields): void {
    this.#pino.error(fields ?? {}, message);
  }

  child(fields: LogFields): Logger {
    return new PinoLogger(this.#pino.child(fields));
  }
}

/** A logger that drops everything, for tests. */
export const silentLogger: Logger = createLogger({ write: () => {} });

/**
 * Lines waiting for a stderr that does not take them (full, or failing) are kept up to this many
 * bytes, in order; lines beyond are dropped until it takes them again.
 */
const MAX_PENDING_LOG_BYTES = 16 * 1024 * 1024;

/**
 * Lines are handed to the destination together: the lines of up to LINGER_MS, or BATCH_CHARS
 * characters of them, in one write. sonic-boom starts a write(2) on libuv's thread pool for each
 * write it is given while none is in flight, which for an access line per request would cost more
 * than the request's own routing.
 */
const LINGER_MS = 10;
const BATCH_CHARS = 64 * 1024;

/**
 * The service's logger: JSON lines on stderr (`fd`) through pino's own destination (sonic-boom),
 * written off the request path: lines go to sonic-boom together at most LINGER_MS after the first
 * of them was logged, and sonic-boom writes them as soon as its previous write has returned. A write
 * the descriptor refuses for now (EAGAIN) is retried; no write error throws. What is pending is
 * written synchronously when the thread exits. Readable coloured lines instead on a terminal
 * (`pnpm start`), written synchronously.
 */
export function createServiceLogger(level: LogLevel, options: { terminal?: boolean; fd?: number; base?: LogFields } = {}): Logger {
  const base = options.base ?? {};
  if (options.terminal ?? process.stderr.isTTY === true) {
    return createLogger({ level, base, destination: pinoPretty({ destination: options.fd ?? 2, colorize: true, translateTime: 'SYS:HH:MM:ss.l', sync: true }) });
  }
  const fd = options.fd ?? process.stderr.fd;
  const destination = pino.destination({ dest: fd, sync: false, minLength: 0, maxLength: MAX_PENDING_LOG_BYTES });
  // pino stops writing on EPIPE (nobody reads stderr) and re-emits any other error, which must not
  // become an uncaught exception: sonic-boom keeps the lines and tries them again with the next.
  destination.on('error', () => {});
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const handOver = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (pending === '') return;
    const lines = pending;
    pending = '';
    destination.write(lines);
  };
  // At exit nothing asynchronous can finish: sonic-boom's queue and the lines not handed over yet
  // are written synchronously, in that order (a write already in flight is left to complete on its own).
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // sonic-boom's queue cannot be written now; the lines not handed over are still tried below.
    }
    try {
      if (pending !== '') writeSync(fd, pending);
    } catch {
      // A descriptor that fails now cannot be written to before the thread ends.
    }
    pending = '';
  });
  return createLogger({
    level,
    base,
    destination: {
      write(line: string): void {
        pending += line;
        if (pending.length >= BATCH_CHARS) handOver();
        // Not a reason to keep the process alive: whatever is pending is written at exit.
        else timer ??= setTimeout(handOver, LINGER_MS).unref();
      },
    },
  });
}
