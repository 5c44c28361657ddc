// Requests Node's HTTP parser rejects before any application code runs (a space in the path,
// oversized headers, broken framing) would get Node's bare `400 Bad Request` with no body. Attach
// this to every listener (listener-limits.ts does) so they too get the documented error body and an
// X-Request-Id: 431 for oversized headers, 408 for headers that did not arrive in time, 400 for the
// rest. The connection is closed afterwards: the parser cannot resume it.
//
// A socket that sent nothing at all before the headers timeout is closed without an answer (nginx's
// `client_header_timeout`): there is no request to answer. Every refused socket is destroyed on
// this side within CLOSE_LINGER_MS of the answer, whether or not the peer closes its own side
// (Node's listeners allow half-open sockets, so `end()` alone would leave a silent peer holding
// the descriptor).
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Logger } from '../logger.ts';
import { errorBody } from './errors.ts';
import { logAnswer } from './refusal-log.ts';

/** Time an answered refusal has to reach the peer before the socket is destroyed. */
const CLOSE_LINGER_MS = 1_000;

export function clientErrorHandler(logger: Logger): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable || (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesRead === 0)) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    const refusal =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? { status: '431 Request Header Fields Too Large', message: 'The request headers are too large; send at most 16 KiB of headers.' }
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? { status: '408 Request Timeout', message: 'The request headers did not arrive in time; send the whole request at once.' }
          : {
              status: '400 Bad Request',
              message: 'The request could not be parsed as HTTP; check the request line (encode spaces and special characters in the URL) and headers.',
            };
    const payload = JSON.stringify(errorBody('invalid_request', refusal.message, {}));
    logAnswer(logger, 'request', { operation: 'unparsable', method: null, path: null, status: Number(refusal.status.slice(0, 3)), ms: 0, request_id: requestId, parse_error: error.code ?? error.message });
    socket.end(
      `HTTP/1.1 ${refusal.status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${payload}`,
    );
    const linger = setTimeout(() => socket.destroy(), CLOSE_LINGER_MS).unref();
    socket.once('close', () => clearTimeout(linger));
  };
}
