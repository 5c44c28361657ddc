// Structured JSON logs, one object per line on stderr (stdout stays free for command output such
// as a created key). Levels below LOG_LEVEL are dropped.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(
  options: { level?: LogLevel; base?: LogFields; write?: (line: string) => void } = {},
): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  return new JsonLogger(ORDER[options.level ?? 'info'], options.base ?? {}, write);
}

/** One object per child, with the methods on the prototype: a child per request or stream is cheap. */
class JsonLogger implements Logger {
  readonly #threshold: number;
  readonly #base: LogFields;
  readonly #write: (line: string) => void;

  constructor(threshold: number, base: LogFields, write: (line: string) => void) {
    this.#threshold = threshold;
    this.#base = base;
    this.#write = write;
  }

  debug(message: string, fields?: LogFields): void {
    this.#log('debug', message, fields);
  }

  info(message: string, fields?: LogFields): void {
    this.#log('info', message, fields);
  }

  warn(message: string, fields?: LogFields): void {
    this.#log('warn', message, fields);
  }

  error(message: string, fields?: LogFields): void {
    this.#log('error', message, fields);
  }

  child(fields: LogFields): Logger {
    return new JsonLogger(this.#threshold, { ...this.#base, ...fields }, this.#write);
  }

  #log(level: LogLevel, message: string, fields?: LogFields): void {
    if (ORDER[level] < this.#threshold) return;
    const entry = { time: new Date().toISOString(), level, msg: message, ...this.#base, ...fields };
    // The replacer costs on every value; only entries that carry an Error need it.
    const hasError = fields !== undefined && Object.values(fields).some((value) => value instanceof Error);
    this.#write(`${hasError ? JSON.stringify(entry, errorReplacer) : JSON.stringify(entry)}\n`);
  }
}

/** A logger that drops everything, for tests. */
export const silentLogger: Logger = createLogger({ write: () => {} });

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
