// The limit: a bare node:http server answering each benchmarked URL with the bytes the real server
// returned for it, from memory. No routing beyond one Map lookup, no validation, no logging.
// Responses recorded under the URL `*` answer every URL not recorded, one after the other in turn,
// so a load over more distinct URLs than were recorded gets the recorded answers' mix of sizes.
// Run as a child process: `node bare-http-server.ts <routes.json>`; it sends `{ port }` over IPC
// once listening and stops on SIGTERM.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { listenForParent } from './processes.ts';

export interface RecordedResponse {
  /** Path and query exactly as requested, or `*` for any URL not recorded. */
  url: string;
  status: number;
  contentType: string;
  /** The body, base64, so any bytes survive the JSON file. */
  body: string;
}

interface Route {
  status: number;
  headers: Record<string, string | number>;
  body: Buffer;
}

const file = process.argv[2];
if (file === undefined) throw new Error('usage: bare-http-server.ts <routes.json>');
const routes = new Map<string, Route>();
const inTurn: Route[] = [];
for (const recorded of JSON.parse(readFileSync(file, 'utf8')) as RecordedResponse[]) {
  const body = Buffer.from(recorded.body, 'base64');
  const route = { status: recorded.status, headers: { 'content-type': recorded.contentType, 'content-length': body.length }, body };
  if (recorded.url === '*') inTurn.push(route);
  else routes.set(recorded.url, route);
}
const notFound = Buffer.from('{"status":"error","error":"not_found","message":"not recorded","query":{},"data":null,"meta":null}');
let turn = 0;

const server = createServer((req, res) => {
  const route = routes.get(req.url ?? '') ?? inTurn[turn++ % Math.max(1, inTurn.length)];
  if (route === undefined) {
    res.writeHead(404, { 'content-type': 'application/json', 'content-length': notFound.length }).end(notFound);
    return;
  }
  res.writeHead(route.status, route.headers).end(route.body);
});
server.keepAliveTimeout = 60_000;
listenForParent(server);
