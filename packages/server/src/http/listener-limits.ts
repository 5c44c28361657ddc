// Bounds every listener (API and stream) applies, so that connections cannot exhaust the process:
// - a socket that has not sent complete request headers within `headersTimeoutMs` is answered 408
//   and closed, or closed without an answer when it sent nothing at all (Node checks every
//   `CONNECTIONS_CHECK_MS`; client-error.ts destroys the socket whether or not the peer closes its
//   side), so silent or trickling sockets last at most headersTimeoutMs + CONNECTIONS_CHECK_MS + 1 s;
// - at most `maxConnections` open sockets; Node closes any socket beyond that on accept, before a
//   byte is read, so the other listener and the sockets already open keep being served;
// - whatever Node's parser refuses (oversized headers, broken framing, timeouts) is answered with
//   the contract's error body and an X-Request-Id (client-error.ts), on both ports.
// The two listeners share the process's open-file limit: their caps together must stay below it,
// with a reserve for the databases, logs and the price log (see `connectionCaps`). At start the
// soft limit is raised to the hard limit where the system allows (`raiseOpenFileLimit`), and the
// caps are fitted to what there is (`fitConnectionCaps`): a warning only when the limit is below
// what the service needs to run (MIN_OPEN_FILES), saying how to raise it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import type { Logger } from '../logger.ts';
import { clientErrorHandler } from './client-error.ts';

export const CONNECTIONS_CHECK_MS = 1_000;

export interface ListenerLimits {
  maxConnections: number;
  headersTimeoutMs: number;
}

/** Options for http.createServer that the limits need at construction. */
export const SERVER_OPTIONS: http.ServerOptions = { connectionsCheckingInterval: CONNECTIONS_CHECK_MS };

export function applyListenerLimits(server: http.Server, limits: ListenerLimits, logger: Logger): void {
  server.maxConnections = limits.maxConnections;
  server.headersTimeout = limits.headersTimeoutMs;
  // The whole request is its headers (no operation takes a body); a stream response is not bounded.
  server.requestTimeout = limits.headersTimeoutMs;
  server.on('clientError', clientErrorHandler(logger));
  server.on('drop', (data?: { remoteAddress?: string }) => {
    logger.warn('connection refused: listener at its connection cap', { max_connections: limits.maxConnections, remote_address: data?.remoteAddress });
  });
}

/** File descriptors kept free for everything that is not a client socket. */
export const DESCRIPTOR_RESERVE = 256;

/**
 * Caps for the API and the stream listener that fit the process's soft open-file limit with
 * DESCRIPTOR_RESERVE to spare: the configured caps when they fit, else both scaled down in
 * proportion. `limit` is undefined where the system does not tell (then the caps are kept).
 */
export function connectionCaps(
  wanted: { api: number; stream: number },
  limit: number | undefined = openFileLimit(),
): { api: number; stream: number; limit: number | undefined } {
  if (limit === undefined || wanted.api + wanted.stream + DESCRIPTOR_RESERVE <= limit) return { ...wanted, limit };
  const room = Math.max(2, limit - DESCRIPTOR_RESERVE);
  const share = room / (wanted.api + wanted.stream);
  return { api: Math.max(1, Math.floor(wanted.api * share)), stream: Math.max(1, Math.floor(wanted.stream * share)), limit };
}

/**
 * The open-file limit below which the service is not fit to run with its defaults: the reserve
 * plus 1,024 client sockets shared by the two listeners. Above it, caps scaled down to the limit
 * are the caps working as designed (logged at info); below it, a warning says how to raise it.
 */
export const MIN_OPEN_FILES = DESCRIPTOR_RESERVE + 1_024;

/** What to log about the caps `connectionCaps` chose, or null when they are the wanted ones. */
export function capsNotice(
  wanted: { api: number; stream: number },
  caps: { api: number; stream: number; limit: number | undefined },
): { level: 'info' | 'warn'; message: string; fields: Record<string, number | undefined> } | null {
  if (caps.api === wanted.api && caps.stream === wanted.stream) return null;
  const fields = { open_file_limit: caps.limit, api: caps.api, stream: caps.stream, needed_for_configured_caps: wanted.api + wanted.stream + DESCRIPTOR_RESERVE };
  if (caps.limit !== undefined && caps.limit < MIN_OPEN_FILES) {
    return {
      level: 'warn',
      message: `open-file limit ${caps.limit} is below the ${MIN_OPEN_FILES} the service needs; raise it (ulimit -n ${fields.needed_for_configured_caps}, or LimitNOFILE= under systemd) or the listeners refuse connections early`,
      fields,
    };
  }
  return { level: 'info', message: 'connection caps fitted to the open-file limit', fields };
}

/** Raises the open-file limit where allowed and returns the caps that fit it, logging as `capsNotice` says. */
export function fitConnectionCaps(wanted: { api: number; stream: number }, logger: Logger): { api: number; stream: number } {
  raiseOpenFileLimit(logger);
  const caps = connectionCaps(wanted);
  const notice = capsNotice(wanted, caps);
  if (notice !== null) logger[notice.level](notice.message, notice.fields);
  return caps;
}

/** The soft limit on open files from /proc (Linux); undefined elsewhere or when unlimited. */
function openFileLimit(): number | undefined {
  return openFileLimits()?.soft;
}

/** Soft and hard limits on open files from /proc (Linux); undefined elsewhere; unlimited as undefined. */
function openFileLimits(): { soft: number | undefined; hard: number | undefined } | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((row) => row.startsWith('Max open files'));
    if (line === undefined) return undefined;
    const [, soft, hard] = line.split(/\s{2,}/u);
    const value = (raw: string | undefined) => (raw === undefined || raw === 'unlimited' ? undefined : Number(raw));
    return { soft: value(soft), hard: value(hard) };
  } catch {
    return undefined;
  }
}

/**
 * Raises this process's soft open-file limit to its hard limit, as `ulimit -n $(ulimit -Hn)` would,
 * with util-linux's `prlimit` (Node has no setrlimit). Where that is missing or refused, or the
 * system is not Linux, the limit stays; the caps then fit what there is.
 */
export function raiseOpenFileLimit(logger: Logger): void {
  const limits = openFileLimits();
  if (limits === undefined || limits.soft === undefined || limits.soft === limits.hard) return;
  const hard = limits.hard === undefined ? 'unlimited' : String(limits.hard);
  try {
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${hard}:${hard}`], { stdio: 'ignore', timeout: 5_000 });
    logger.info('open-file limit raised', { from: limits.soft, to: openFileLimit() ?? hard });
  } catch (error) {
    // Only a problem when what there is does not suffice, which fitConnectionCaps says.
    logger.info('could not raise the open-file limit', { soft: limits.soft, hard, error: (error as Error).message });
  }
}
