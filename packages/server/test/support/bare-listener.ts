// A bare `node:http` server for the tests of one piece of the request path (the response writer,
// the pipeline, the static router) without the app around it.
import http, { type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BareListener {
  /** `http://127.0.0.1:<port>`, a port the system chose. */
  url: string;
  /** Cuts every connection, open streams included, and stops listening. */
  close(): Promise<void>;
}

export async function serveBare(listener: RequestListener): Promise<BareListener> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
