import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import layers from './eslint/layers.js';
import noImportCycle from './eslint/no-import-cycle.js';

/** Node's built-in modules, which workflow code (bundled into Temporal's sandbox) must not import. */
const NODE_BUILTINS = builtinModules
  .flatMap((name) => [name, `node:${name}`])
  .map((name) => ({ name, message: 'workflow code must not use Node built-ins' }));

/** What else sandboxed workflow code must not import: the MCP side, and activities but as types. */
const SANDBOX_PATTERNS = [
  { group: ['@modelcontextprotocol/*', '../mcp/*', '../mcp'], message: 'workflow code must not import the MCP side' },
  { group: ['../activities', '../activities/*'], allowTypeImports: true, message: 'import activities as types only' },
];

/**
 * The layers of src/, bottom up, and the layers each may use (docs/architecture.md shows the same picture). A file
 * belongs to the first layer that names its folder (a prefix ending in "/") or the file itself.
 */
const LAYERS = [
  { name: 'util', files: ['src/util/', 'src/version.ts'], uses: [] },
  // What workflows and the bridge agree on: bundled into the workflow sandbox, so plain definitions only.
  { name: 'contract', files: ['src/contract/'], uses: ['util'] },
  // Node-side pieces every process shares: the task key and answer seals, Temporal's configuration, tracing.
  { name: 'shared', files: ['src/shared/'], uses: ['contract', 'util'] },
  // Decision records (signing, the stores, verification), the approvers directory and the messages people are sent:
  // used by the bridge, the workers and the auditor's command.
  { name: 'records', files: ['src/records/'], uses: ['shared', 'contract', 'util'] },
  // Activities are imported by workflows as types only (see the sandbox rule below).
  { name: 'workflows', files: ['src/workflows/', 'src/workflow.ts'], uses: ['contract', 'activities'] },
  { name: 'activities', files: ['src/activities/'], uses: ['records', 'shared', 'contract', 'util'] },
  { name: 'worker', files: ['src/worker.ts', 'src/task-worker.ts'], uses: ['activities', 'records', 'shared', 'contract', 'util'] },
  // The task core: reached through its one face, src/core/index.ts; its other files are its own.
  { name: 'core', files: ['src/core/'], uses: ['shared', 'contract', 'util'], face: 'src/core/index.ts' },
  { name: 'approvals', files: ['src/approvals/'], uses: ['records', 'core', 'shared', 'contract', 'util'] },
  {
    name: 'protocol',
    files: ['src/mcp/protocol/'],
    uses: ['core', 'contract', 'util'],
  },
  { name: 'app', files: ['src/mcp/app/'], uses: ['contract', 'util'] },
  {
    name: 'tools',
    files: ['src/mcp/tools/'],
    uses: ['protocol', 'approvals', 'core', 'records', 'contract', 'util'],
  },
  { name: 'calls', files: ['src/mcp/calls/'], uses: ['tools', 'protocol', 'app', 'approvals', 'core', 'shared', 'contract', 'util'] },
  { name: 'endpoints', files: ['src/mcp/endpoints.ts'], uses: ['protocol'] },
  {
    name: 'mcp2025',
    files: ['src/mcp/mcp2025/'],
    uses: ['endpoints', 'calls', 'tools', 'protocol', 'app', 'approvals', 'core', 'shared', 'contract', 'util'],
  },
  {
    name: 'mcp2026',
    files: ['src/mcp/mcp2026/'],
    uses: ['endpoints', 'calls', 'tools', 'protocol', 'app', 'approvals', 'core', 'shared', 'contract', 'util'],
  },
  {
    name: 'transports',
    files: ['src/mcp/transports/'],
    uses: ['mcp2025', 'mcp2026', 'endpoints', 'protocol', 'core', 'shared', 'contract', 'util'],
  },
  // The approvals page's server side: sign-in, sessions and the page's calls, over the approvals and the page itself.
  { name: 'web', files: ['src/mcp/web/'], uses: ['transports', 'app', 'approvals', 'records', 'core', 'shared', 'contract', 'util'] },
  {
    name: 'bridge',
    files: ['src/mcp/bridge.ts', 'src/mcp/bridge/'],
    uses: [
      'transports',
      'mcp2026',
      'mcp2025',
      'endpoints',
      'calls',
      'tools',
      'protocol',
      'app',
      'approvals',
      'core',
      'shared',
      'contract',
      'util',
    ],
  },
  // The codec server of Temporal's Web UI and CLI: the payload codec behind the bridge's authentication.
  { name: 'codec', files: ['src/codec/'], uses: ['transports', 'shared', 'util'] },
  {
    name: 'serve',
    files: ['src/mcp/serve/'],
    uses: ['bridge', 'web', 'transports', 'endpoints', 'tools', 'app', 'approvals', 'records', 'core', 'shared', 'contract', 'util'],
  },
  { name: 'client', files: ['src/client/'], uses: ['contract', 'util'] },
  {
    name: 'entries',
    files: ['src/index.ts', 'src/cli.ts'],
    uses: [
      'codec',
      'serve',
      'bridge',
      'web',
      'transports',
      'mcp2026',
      'mcp2025',
      'endpoints',
      'calls',
      'tools',
      'protocol',
      'app',
      'approvals',
      'core',
      'client',
      'worker',
      'records',
      'activities',
      'workflows',
      'shared',
      'contract',
      'util',
    ],
  },
];

/** The files of the layers named, as globs. */
function layerFiles(...names) {
  return LAYERS.filter((layer) => names.includes(layer.name))
    .flatMap((layer) => layer.files)
    .map((file) => (file.endsWith('/') ? `${file}**/*.ts` : file));
}

/** The files of the layers that run in the workflow sandbox (the workflows and the contract they bundle), as globs. */
function sandboxedFiles() {
  return layerFiles('workflows', 'contract');
}

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
    plugins: { local: { rules: { 'no-import-cycle': noImportCycle, layers } } },
    rules: {
      'local/no-import-cycle': 'error',
      'local/layers': ['error', { root: path.dirname(fileURLToPath(import.meta.url)), layers: LAYERS }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no MCP, no server code. The files are
    // those of the layers workflows and contract in the table above (the contract is bundled with the workflows).
    files: sandboxedFiles(),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: NODE_BUILTINS,
          patterns: SANDBOX_PATTERNS,
        },
      ],
    },
  },
  {
    // The example is the library's first user: a package of its own that reaches the library through its public
    // entries only, by name (temporal-mcp-tasks, and temporal-mcp-tasks/workflow in workflow code), as a team's own
    // code would; nothing of it reaches into the checkout's sources.
    files: ['examples/invoice-approval/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/*', '../../*', '!../../src', 'temporal-mcp-tasks/*', '!temporal-mcp-tasks/workflow'],
              message: 'the example imports the package by name only: temporal-mcp-tasks, or temporal-mcp-tasks/workflow',
            },
          ],
        },
      ],
    },
  },
  {
    // The example's tests reach the example's own sources beside them, and the library by name only, like the rest of it.
    files: ['examples/invoice-approval/test/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../../*', 'temporal-mcp-tasks/*', '!temporal-mcp-tasks/workflow'],
              message: 'the example imports the package by name only: temporal-mcp-tasks, or temporal-mcp-tasks/workflow',
            },
          ],
        },
      ],
    },
  },
  {
    // The example's workflows and the definitions bundled with them run in Temporal's sandbox: no Node built-ins, and
    // of the package only its workflow entry. This block replaces the one above for these files, so it keeps its rule.
    files: ['examples/invoice-approval/src/workflows/**/*.ts', 'examples/invoice-approval/src/{invoice,expense,spend}.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...NODE_BUILTINS,
            { name: 'temporal-mcp-tasks', allowTypeImports: true, message: 'workflow code imports temporal-mcp-tasks/workflow' },
          ],
          patterns: [
            ...SANDBOX_PATTERNS,
            {
              group: ['**/src/*', '../../*', 'temporal-mcp-tasks/*', '!temporal-mcp-tasks/workflow'],
              message: 'the example imports the package by name only: temporal-mcp-tasks/workflow in workflow code',
            },
          ],
        },
      ],
    },
  },
  {
    // The library is tested on its own fixtures (test/fixtures), never through the example, which has tests of its own.
    // The fixtures' workflow code has the block below instead, whose patterns keep out every source but the package's.
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/examples/**', 'invoice-approval-example', 'invoice-approval-example/*'],
              message: "the library's tests run on test/fixtures; the example's tests are in examples/invoice-approval/test",
            },
          ],
        },
      ],
    },
  },
  {
    // The library's test fixtures' workflows and the definitions bundled with them run in Temporal's sandbox too: no
    // Node built-ins, activities as types, and of the package only its workflow entry, as a team's own workflows.
    files: ['test/fixtures/workflows/**/*.ts', 'test/fixtures/definitions.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...NODE_BUILTINS,
            { name: 'temporal-mcp-tasks', allowTypeImports: true, message: 'workflow code imports temporal-mcp-tasks/workflow' },
          ],
          patterns: [
            {
              group: ['@modelcontextprotocol/*', '**/src/*', '**/helpers/*'],
              message: 'workflow code imports temporal-mcp-tasks/workflow only',
            },
            { group: ['../activities', '../activities/*'], allowTypeImports: true, message: 'import activities as types only' },
          ],
        },
      ],
    },
  },
  {
    // The package's workflow entry (`temporal-mcp-tasks/workflow`) is bundled into the same sandbox: it re-exports the
    // workflow side of the contract and nothing else.
    files: ['src/workflow.ts', 'src/contract/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: NODE_BUILTINS,
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
    // The task core knows no wire: no MCP SDK error class, no server of either generation (the layers do the rest).
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@modelcontextprotocol/sdk/types.js',
              importNames: ['McpError', 'ErrorCode'],
              message: 'the task core throws its own errors (errors.ts)',
            },
            { name: '@modelcontextprotocol/server', message: 'the task core knows no wire generation' },
            { name: '@modelcontextprotocol/sdk/server/index.js', message: 'the task core knows no wire generation' },
          ],
        },
      ],
    },
  },
  {
    // Below the protocol front-ends an error is a JsonRpcError or one of the core's: no SDK error class, whose message
    // or type belongs to one generation. Each front-end maps them once (protocol/wire-errors.ts reads the SDKs' own).
    files: layerFiles('approvals', 'protocol', 'app', 'tools', 'calls'),
    ignores: ['src/mcp/protocol/wire-errors.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@modelcontextprotocol/sdk/types.js',
              importNames: ['McpError'],
              message: 'throw a JsonRpcError (util/json-rpc-error.ts); each generation maps it once',
            },
            {
              name: '@modelcontextprotocol/server',
              importNames: ['ProtocolError'],
              message: 'throw a JsonRpcError (util/json-rpc-error.ts); each generation maps it once',
            },
          ],
        },
      ],
    },
  },
  {
    // The task view runs in a browser frame inside the chat host, the passkey and approvals pages in a browser tab:
    // browser globals, no Node, no server code.
    files: ['src/mcp/app/view/**/*.ts', 'src/mcp/app/passkey-page/**/*.ts', 'src/mcp/app/approvals-page/**/*.ts'],
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
          'HTMLButtonElement',
          'location',
          'fetch',
          'crypto',
          'btoa',
          'TextEncoder',
          'URLSearchParams',
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
          // and the one way amounts of money are written and text is made visible (pure modules with no imports), shared
          // with the workflows and the server
          patterns: [
            {
              regex: '^\\.\\./(?!\\.\\./\\.\\./(contract/amount|util/visible-text|util/canonical-json)$)',
              message:
                'the task view bundles only its own folder, src/contract/amount.ts, src/util/visible-text.ts, src/util/canonical-json.ts and @modelcontextprotocol/ext-apps',
            },
          ],
        },
      ],
    },
  },
  {
    // The approvals page shows a question's subject as the task view does: besides its own folder it bundles the
    // view's DOM helpers, field controls and subject rendering (and the amounts they write). This block replaces the
    // one above for these files, so it keeps its Node rule.
    files: ['src/mcp/app/approvals-page/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: builtinModules
            .flatMap((name) => [name, `node:${name}`])
            .map((name) => ({ name, message: 'the approvals page runs in a browser' })),
          patterns: [
            {
              regex: '^\\.\\./(?!view/(dom|field-controls|result)$|\\.\\./\\.\\./contract/(amount|decision-records)$)',
              message:
                'the approvals page bundles only its own folder, view/dom.ts, view/field-controls.ts, view/result.ts, src/contract/amount.ts and the types of src/contract/decision-records.ts',
            },
          ],
        },
      ],
    },
  },
  {
    // Files that do one job: at most 400 lines a file and 80 lines of code a function (blank lines and comments aside),
    // with no exceptions. scripts/file-sizes.ts (npm run lint) holds the other files of src/ to the same 400 lines.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
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
