// Requests Node's HTTP parser rejects before any application code runs (a space in the path,
// oversized headers, broken framing) would get Node's bare `400 Bad Request` with no body. Attach
// this to the API server (`server.on('clientError', ...)`) so they too get the documented error
// body and an X-Request-Id. The connection is closed afterwards: the parser cannot resume it.
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Logger } from '../logger.ts';
import { errorBody } from './errors.ts';

export function clientErrorHandler(logger: Logger): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const message = tooLarge
      ? 'The request headers are too large.'
      : 'The request could not be parsed as HTTP; check the request line (encode spaces and special characters in the URL) and headers.';
    const payload = JSON.stringify(errorBody('invalid_request', message, {}));
    logger.info('request', { method: null, path: null, status: 400, ms: 0, request_id: requestId, parse_error: error.code ?? error.message });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${payload}`,
    );
  };
}
