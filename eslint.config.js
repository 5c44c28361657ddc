// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const TESTING_ONLY = { group: ['@catalog/contract/testing'], message: 'Test builders are for tests and benches only.' };
// The server's layers, outermost last: domain (catalog/, stream/, prices/price-log.ts) → store and
// price-log adapters, config, logger → http/ → cli/. A module imports only from its own layer or
// the ones before it; `app.ts`, `main.ts` and the stream thread wire the layers together.
const NO_CLI = { group: ['**/cli/**'], message: 'Only the CLI imports cli/: it is the outermost layer.' };
const NO_HTTP = { group: ['**/http/**'], message: 'Adapters, config and the logger must not import the transport (http/).' };

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/dist/**', '**/.build/**', '**/.pack/**', '**/.stryker-tmp*/**', '**/reports/mutation/**', '**/generated/**', '**/.turbo/**', 'bench/results/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'describe', property: 'only', message: 'Focused tests must not land.' },
        { object: 'it', property: 'only', message: 'Focused tests must not land.' },
        { object: 'test', property: 'only', message: 'Focused tests must not land.' },
      ],
    },
  },
  {
    // Test builders are for tests and benches: the server at run time and the published client never load them.
    files: ['packages/server/src/**/*.ts', 'packages/client/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [TESTING_ONLY] }],
    },
  },
  {
    // One writer (http/exchange.ts): Express's response helpers would be a second one, with
    // headers, status and error shapes of their own.
    files: ['packages/server/src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression > MemberExpression.callee[object.name='res'][property.name=/^(json|jsonp|send|sendFile|sendStatus|render|redirect|download|attachment|status|set|header|type|format|cookie|clearCookie|location|links|vary|append|contentType)$/]",
          message: 'Answer through http/exchange.ts (sendJson, sendError, sendResource, sendStream): it is the one writer.',
        },
      ],
    },
  },
  {
    // Nothing below the CLI reads its flags or commands: the CLI calls into the layers with values.
    files: ['packages/server/src/**/*.ts'],
    ignores: ['packages/server/src/cli/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [TESTING_ONLY, NO_CLI] }],
    },
  },
  {
    // Adapters and the service's own plumbing are used by the transport, never the reverse.
    files: [
      'packages/server/src/store/**/*.ts',
      'packages/server/src/prices/**/*.ts',
      'packages/server/src/config.ts',
      'packages/server/src/settings.ts',
      'packages/server/src/logger.ts',
      'packages/server/src/metrics.ts',
      'packages/server/src/storage-url.ts',
      'packages/server/src/redis-connection.ts',
    ],
    rules: {
      'no-restricted-imports': ['error', { patterns: [TESTING_ONLY, NO_CLI, NO_HTTP] }],
    },
  },
  {
    // The domain knows nothing of transports or drivers: adapters depend on it, never the reverse.
    // The monitors' rules and delivery likewise; their one transport is webhook-sender.ts.
    files: ['packages/server/src/catalog/**/*.ts', 'packages/server/src/prices/price-log.ts', 'packages/server/src/stream/**/*.ts', 'packages/server/src/monitors/**/*.ts'],
    ignores: ['packages/server/src/monitors/webhook-sender.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['express', 'openapi-backend', 'pg', 'ioredis', 'node:sqlite', 'node:http'], message: 'Domain modules must not import transports or drivers.' },
            TESTING_ONLY,
            // The ports the domain reads through live in it (catalog/catalog-store.ts, prices/price-log.ts).
            { group: ['**/store/**', '**/prices/sqlite/**', '**/prices/redis/**', '**/http/**', '**/cli/**'], message: 'Domain modules must not reach into adapters, transport or the CLI.' },
          ],
        },
      ],
    },
  },
  {
    // A package reaches another through its declared exports, never by a relative path into its
    // sources (the stream mock once copied the server's rules that way).
    files: ['packages/stream-mock/**/*.ts', 'packages/client/test/**/*.ts'],
    // This test runs the real server in process (port 0) to prove the client's hand-over against
    // it: it starts the server, it does not borrow its rules.
    ignores: ['packages/client/test/watch-products.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/server/src/**'], message: 'Import shared rules from @catalog/contract, not from the server\'s sources.' }] }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
