#!/usr/bin/env node
// `temporal-mcp-serve [options]`: the same as `temporal-mcp-tasks serve [options]`.
require('./compiled')
  .load('cli')
  .runCommandLine(['serve', ...process.argv.slice(2)]);
