import { defineConfig } from '@hey-api/openapi-ts';

// The server takes only the types; scripts/generate-handlers.ts writes the handler signatures
// and the operation table beside them.
export default defineConfig({
  input: '../../specs/dist/openapi.json',
  output: {
    path: 'src/generated',
    clean: true,
  },
  plugins: ['@hey-api/typescript'],
});
