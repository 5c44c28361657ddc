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
  const threshold = ORDER[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const base = options.base ?? {};
  const log = (level: LogLevel, message: string, fields?: LogFields): void => {
    if (ORDER[level] < threshold) return;
    const entry = { time: new Date().toISOString(), level, msg: message, ...base, ...fields };
    // The replacer costs on every value; only entries that carry an Error need it.
    const hasError = fields !== undefined && Object.values(fields).some((value) => value instanceof Error);
    write(`${hasError ? JSON.stringify(entry, errorReplacer) : JSON.stringify(entry)}\n`);
  };
  return {
    debug: (message, fields) => log('debug', message, fields),
    info: (message, fields) => log('info', message, fields),
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
    child: (fields) => createLogger({ ...options, base: { ...base, ...fields } }),
  };
}

/** A logger that drops everything, for tests. */
export const silentLogger: Logger = createLogger({ write: () => {} });

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
