// Every response carries X-Request-Id. A caller's id is echoed only when it is short and made of
// safe characters, so it can go into logs and headers unescaped; otherwise a fresh UUID is used.
import { randomUUID } from 'node:crypto';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
