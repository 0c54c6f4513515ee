#!/usr/bin/env node
// `temporal-mcp-client <command> [options]`: the same as `temporal-mcp-tasks client <command> [options]`.
require('./compiled')
  .load('cli')
  .runCommandLine(['client', ...process.argv.slice(2)]);
