import { defineConfig } from '@hey-api/openapi-ts';

// The one hey-api run of the workspace: the types every package imports, and the SDK that
// @catalog/client wraps and ships. scripts/generate.ts then adds the rest of src/generated/.
// CATALOG_GENERATED_DIR redirects both: `pnpm check:generated` generates into a temporary folder and
// compares, so the committed files are never rewritten while other tasks read them.
export default defineConfig({
  input: '../../specs/dist/openapi.json',
  output: {
    path: process.env['CATALOG_GENERATED_DIR'] ?? 'src/generated',
    clean: true,
  },
  plugins: [
    '@hey-api/client-fetch',
    '@hey-api/typescript',
    { name: '@hey-api/sdk' },
  ],
});
