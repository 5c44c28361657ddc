// The API listener's handlers: one file per operation, named after it (list-top-brands.ts), gathered
// by the generated map. `pnpm generate` writes a stub for an operation that has no file yet
// (scripts/handler-files.ts). The stream listener's one operation, streamPrices, is wired by
// stream-server.ts.
export type { ApiHandler, ApiServices } from './api-services.ts';
export { handlers } from './generated/handlers.gen.ts';
