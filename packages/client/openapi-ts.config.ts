import { defineConfig } from '@hey-api/openapi-ts';

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
