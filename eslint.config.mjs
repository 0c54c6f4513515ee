import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';
import noImportCycle from './eslint/no-import-cycle.js';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.temporal/', '.data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-require-imports': 'off',
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  {
    // No import cycles, of types either: a cycle makes two modules one that is read in two places, and a cycle of
    // values leaves one side half-loaded while the other starts.
    files: ['src/**/*.ts', 'scripts/**/*.ts', 'test/**/*.ts'],
    plugins: { local: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: { 'local/no-import-cycle': 'error' },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no MCP, no server code. The shared
    // definitions are bundled with it, all but the Temporal connection settings and the bridge's key and answer seals
    // (used by the bridge and by the activities that check answers, never by workflow code).
    files: ['src/workflows/**/*.ts', 'src/shared/**/*.ts'],
    ignores: ['src/shared/temporal-config.ts', 'src/shared/task-key.ts', 'src/shared/answer-proof.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: builtinModules
            .flatMap((name) => [name, `node:${name}`])
            .map((name) => ({ name, message: 'workflow code must not use Node built-ins' })),
          patterns: [
            { group: ['@modelcontextprotocol/*', '../mcp/*', '../mcp'], message: 'workflow code must not import the MCP side' },
            { group: ['../activities', '../activities/*'], allowTypeImports: true, message: 'import activities as types only' },
          ],
        },
      ],
    },
  },
  {
    // The package's workflow entry (`temporal-mcp-tasks/workflow`) is bundled into the same sandbox: it re-exports the
    // workflow side of the contract and nothing else.
    files: ['src/workflow.ts', 'src/contract.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: builtinModules
            .flatMap((name) => [name, `node:${name}`])
            .map((name) => ({ name, message: 'workflow code must not use Node built-ins' })),
          patterns: [
            {
              group: [
                '@modelcontextprotocol/*',
                './mcp',
                './mcp/*',
                './client',
                './client/*',
                './activities',
                './activities/*',
                './shared/temporal-config',
                './shared/task-key',
                './shared/answer-proof',
                './index',
                './cli',
                './worker',
                './version',
              ],
              message: 'the workflow entry re-exports workflow code and the shared definitions only',
            },
          ],
        },
      ],
    },
  },
  {
    // The library's public entry and the tools every bridge serves by default hold no sample: a package user opts into
    // those (`temporal-mcp-tasks/samples`), and the sample worker is a command of its own.
    files: ['src/index.ts', 'src/mcp/bridge.ts', 'src/mcp/tools/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                './samples',
                './tools/samples',
                './mcp/tools/samples',
                '**/process-invoice',
                '**/release-scheduled-payment',
                '**/submit-expense-report',
                '**/request-spend-approval',
                './worker',
              ],
              message: 'the samples are opt-in: the public entry, the bridge and the default tools import none of them',
            },
          ],
        },
      ],
    },
  },
  {
    // Activities do I/O for workflows; they never reach into the MCP side or the workflow API.
    files: ['src/activities/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../mcp', '../mcp/*', '@temporalio/workflow'],
              message: 'activities must not import the MCP side or the workflow API',
            },
          ],
        },
      ],
    },
  },
  {
    // The client speaks MCP to any server: it shares definitions, never the server's code.
    files: ['src/client/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../mcp', '../mcp/*'], message: 'the client must not import the MCP server side' }] },
      ],
    },
  },
  {
    // The task layer serves every protocol front-end and tool; it depends on none of them.
    files: ['src/mcp/tasks/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['../tools', '../tools/*', '../mcp2025/*', '../mcp2026/*'], message: 'the task layer must not import its callers' },
          ],
        },
      ],
    },
  },
  {
    // The task view runs in a browser frame inside the chat host: browser globals, no Node, no server code.
    files: ['src/mcp/app/view/**/*.ts'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'navigator',
          'console',
          'setTimeout',
          'clearTimeout',
          'requestAnimationFrame',
          'URL',
          'Intl',
          'Node',
          'Element',
          'HTMLElement',
          'HTMLInputElement',
          'HTMLHeadingElement',
          'HTMLElementTagNameMap',
        ].map((name) => [name, 'readonly']),
      ),
    },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: builtinModules
            .flatMap((name) => [name, `node:${name}`])
            .map((name) => ({ name, message: 'the task view runs in a browser' })),
          patterns: [{ group: ['../*'], message: 'the task view bundles only its own folder and @modelcontextprotocol/ext-apps' }],
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { process: 'readonly', module: 'writable', require: 'readonly', __dirname: 'readonly' },
    },
  },
  {
    files: ['test/**/*.ts', 'scripts/demo.ts'],
    rules: { 'no-console': 'off' },
  },
);
