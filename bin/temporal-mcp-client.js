#!/usr/bin/env node
// Runs the task-aware MCP client from its TypeScript sources: `npx temporal-mcp-client <command>`.
require('tsx/cjs/api').register();
require('../src/client/cli.ts');
