#!/usr/bin/env node
// Runs the MCP server from its TypeScript sources: `npx temporal-mcp-serve [--http HOST:PORT]`.
require('tsx/cjs/api').register();
require('../src/mcp/main.ts');
