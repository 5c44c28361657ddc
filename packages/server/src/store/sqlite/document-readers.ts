// Threads that read storefront pages' documents from a SQLite catalog file, each on a read-only
// connection of its own (document-reader-thread.ts). A scattered page costs one B-tree descent and
// one 16 KB page read per document, and on a file larger than the OS cache a wait on the disk: on
// the API thread that work would be done between requests, synchronously; here it runs beside
// them, on another core where there is one.
// Guarantees:
// - A read returns the documents of the cursors given, in that order (a cursor with no document is
//   left out), as the latest commit has them when the read runs (WAL: readers never wait for the
//   writer, nor it for them). Reads in flight are answered in any order.
// - The threads start with the first read (a process that lists nothing starts none); a read goes
//   to the thread with the fewest reads in flight.
// - A thread that stops unasked has its reads in flight read again by `fallback` on the calling
//   thread (a read changes nothing), and another starts with the next read; a thread that cannot
//   start (the file cannot be opened read-only) is said in the log, and from then on every read
//   is the fallback's. With no threads asked for, every read is the fallback's.
// - close() fails the reads in flight with ServiceUnavailable and stops every thread.
// Why not a pool library (piscina): each read is one message each way on the API thread's hot path,
// and piscina's per-task bookkeeping there measured about twice a bare message's (bench README,
// "Documents read beside the API thread").
import { Worker } from 'node:worker_threads';
import { ServiceUnavailable } from '../../catalog/errors.ts';
import type { Logger } from '../../logger.ts';

/** API thread → reader: the cursors as `cursorList` writes them. */
export interface PageRead {
  id: number;
  cursors: string;
}
/** Reader → API thread: the page's bytes (transferred), or why it could not be read. */
export type PageReply = { type: 'ready' } | { id: number; page: Uint8Array } | { id: number; error: string };

interface Pending {
  cursors: string;
  reply: PromiseWithResolvers<Uint8Array>;
}

interface Reader {
  worker: Worker;
  pending: Map<number, Pending>;
  closing: boolean;
}

const ENTRY = new URL('./document-reader-thread.ts', import.meta.url);

export class DocumentReaders {
  readonly #path: string;
  readonly #count: number;
  readonly #logger: Logger;
  readonly #fallback: (cursors: string) => Uint8Array;
  readonly #readers: Reader[] = [];
  #nextId = 0;
  /** Set once a thread could not start: the file cannot be read from another connection. */
  #unavailable = false;
  #closed = false;

  /** `count` threads reading the SQLite file at `path`, started with the first read; `fallback` reads on the calling thread. */
  constructor(path: string, count: number, logger: Logger, fallback: (cursors: string) => Uint8Array) {
    this.#path = path;
    this.#count = count;
    this.#logger = logger;
    this.#fallback = fallback;
  }

  /** The bytes of the page of `cursors` (a `cursorList`). */
  read(cursors: string): Promise<Uint8Array> {
    if (this.#closed) return Promise.reject(new ServiceUnavailable('catalog database'));
    while (!this.#unavailable && this.#readers.length < this.#count) {
      try {
        this.#startReader();
      } catch (error) {
        this.#giveUp(error as Error);
      }
    }
    let reader: Reader | undefined;
    for (const candidate of this.#readers) if (reader === undefined || candidate.pending.size < reader.pending.size) reader = candidate;
    if (reader === undefined) return this.#readHere(cursors);
    const id = (this.#nextId += 1);
    const reply = Promise.withResolvers<Uint8Array>();
    reader.pending.set(id, { cursors, reply });
    reader.worker.postMessage({ id, cursors } satisfies PageRead);
    return reply.promise;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const readers = this.#readers.splice(0);
    await Promise.all(
      readers.map(async (reader) => {
        reader.closing = true;
        for (const { reply } of reader.pending.values()) reply.reject(new ServiceUnavailable('catalog database', { cause: new Error('the catalog store is closed') }));
        reader.pending.clear();
        await reader.worker.terminate();
      }),
    );
  }

  /** The fallback's read, a throw as a rejection. */
  #readHere(cursors: string): Promise<Uint8Array> {
    return new Promise((resolve) => resolve(this.#fallback(cursors)));
  }

  /** Logged once: no thread is started from now on; reads go to the threads still running, else to the fallback. */
  #giveUp(error: Error): void {
    if (this.#unavailable) return;
    this.#unavailable = true;
    this.#logger.error("a document reader thread could not start; storefront documents are read on the API's thread", { error, path: this.#path });
  }

  #startReader(): void {
    const worker = new Worker(ENTRY, { workerData: { path: this.#path }, stdout: false, stderr: false });
    const reader: Reader = { worker, pending: new Map(), closing: false };
    this.#readers.push(reader);
    let ready = false;
    worker.on('message', (reply: PageReply) => {
      if ('type' in reply) {
        ready = true;
        return;
      }
      const waiting = reader.pending.get(reply.id);
      reader.pending.delete(reply.id);
      if ('page' in reply) waiting?.reply.resolve(reply.page);
      else waiting?.reply.reject(new ServiceUnavailable('catalog database', { cause: new Error(reply.error) }));
    });
    let lastError: Error | undefined;
    worker.on('error', (error) => {
      lastError = error;
    });
    worker.once('exit', (code) => {
      if (reader.closing) return;
      const index = this.#readers.indexOf(reader);
      if (index >= 0) this.#readers.splice(index, 1);
      const error = lastError ?? new Error(`a document reader thread exited with code ${code}`);
      if (ready) this.#logger.error('a document reader thread stopped; its reads are read again here, and another starts with the next read', { error });
      else this.#giveUp(error);
      for (const { cursors, reply } of reader.pending.values()) this.#readHere(cursors).then(reply.resolve, reply.reject);
      reader.pending.clear();
    });
  }
}
