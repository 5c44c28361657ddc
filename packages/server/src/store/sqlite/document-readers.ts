// Threads that read storefront pages' documents from a SQLite catalog file, each on a read-only
// connection of its own (document-reader-thread.ts). A scattered page costs one B-tree descent and
// one 16 KB page read per document, and on a file larger than the OS cache a wait on the disk: on
// the API thread that work would be done between requests, synchronously; here it runs beside
// them, on another core where there is one.
// Guarantees:
// - A read returns the documents of the cursors given, in that order (a cursor with no document is
//   left out), as the latest commit has them when the read runs (WAL: readers never wait for the
//   writer, nor it for them). Reads in flight are answered in any order.
// - A read goes to the thread with the fewest reads in flight.
// - A thread that stops unasked fails its reads in flight with ServiceUnavailable, and another is
//   started in its place; while none is running, reads run on the calling thread.
// - close() fails the reads still in flight with ServiceUnavailable and stops every thread.
// Why not a pool library (piscina): each read is one message each way on the API thread's hot path,
// and piscina's per-task bookkeeping there measured about twice a bare message's (bench README,
// "documents in reader threads").
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

interface Reader {
  worker: Worker;
  pending: Map<number, PromiseWithResolvers<Uint8Array>>;
  closing: boolean;
}

const ENTRY = new URL('./document-reader-thread.ts', import.meta.url);

export class DocumentReaders {
  readonly #path: string;
  readonly #logger: Logger;
  readonly #readers: Reader[] = [];
  #nextId = 0;
  #closed = false;

  private constructor(path: string, logger: Logger) {
    this.#path = path;
    this.#logger = logger;
  }

  /** `count` threads reading the SQLite file at `path`, each open once this resolves. */
  static async start(path: string, count: number, logger: Logger): Promise<DocumentReaders> {
    const readers = new DocumentReaders(path, logger);
    try {
      await Promise.all(Array.from({ length: count }, () => readers.#startReader()));
    } catch (error) {
      await readers.close();
      throw error;
    }
    return readers;
  }

  /** The page's bytes; undefined when no thread is running (the caller reads it itself). */
  read(cursors: string): Promise<Uint8Array> | undefined {
    let reader: Reader | undefined;
    for (const candidate of this.#readers) {
      if (!candidate.closing && (reader === undefined || candidate.pending.size < reader.pending.size)) reader = candidate;
    }
    if (reader === undefined) return undefined;
    const id = (this.#nextId += 1);
    const reply = Promise.withResolvers<Uint8Array>();
    reader.pending.set(id, reply);
    reader.worker.postMessage({ id, cursors } satisfies PageRead);
    return reply.promise;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const readers = this.#readers.splice(0);
    await Promise.all(readers.map((reader) => this.#stop(reader)));
  }

  #startReader(): Promise<void> {
    const worker = new Worker(ENTRY, { workerData: { path: this.#path }, stdout: false, stderr: false });
    const reader: Reader = { worker, pending: new Map(), closing: false };
    const started = Promise.withResolvers<void>();
    let ready = false;
    worker.on('message', (reply: PageReply) => {
      if ('type' in reply) {
        ready = true;
        this.#readers.push(reader);
        started.resolve();
        return;
      }
      const waiting = reader.pending.get(reply.id);
      reader.pending.delete(reply.id);
      if ('page' in reply) waiting?.resolve(reply.page);
      else waiting?.reject(new ServiceUnavailable('catalog database', { cause: new Error(reply.error) }));
    });
    let lastError: Error | undefined;
    worker.on('error', (error) => {
      lastError = error;
    });
    worker.once('exit', (code) => {
      const reason = lastError ?? new Error(`a document reader thread exited with code ${code}`);
      this.#fail(reader, reason);
      if (!ready) started.reject(reason);
      else if (!reader.closing && !this.#closed) {
        this.#logger.error('a document reader thread stopped; starting another', { error: reason });
        this.#startReader().catch((error: unknown) => this.#logger.error('a document reader thread did not start; its reads run on the API thread', { error }));
      }
    });
    return started.promise;
  }

  #fail(reader: Reader, reason: Error): void {
    const index = this.#readers.indexOf(reader);
    if (index >= 0) this.#readers.splice(index, 1);
    for (const waiting of reader.pending.values()) waiting.reject(new ServiceUnavailable('catalog database', { cause: reason }));
    reader.pending.clear();
  }

  async #stop(reader: Reader): Promise<void> {
    reader.closing = true;
    this.#fail(reader, new Error('the catalog store is closed'));
    await reader.worker.terminate();
  }
}
