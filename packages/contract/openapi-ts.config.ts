import { defineConfig } from '@hey-api/openapi-ts';

// The one hey-api run of the workspace: the types every package imports, and the SDK that
// @catalog/client wraps and ships. scripts/generate.ts then adds the rest of src/generated/.
export default defineConfig({
  input: '../../specs/dist/openapi.json',
  output: {
    path: 'src/generated',
    clean: true,
  },
  plugins: [
    '@hey-api/client-fetch',
    '@hey-api/typescript',
    { name: '@hey-api/sdk' },
  ],
});
