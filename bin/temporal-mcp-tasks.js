#!/usr/bin/env node
// `temporal-mcp-tasks <serve|worker|client|approvals|codec-server|dev-server> [options]`: runs the compiled command of the package.
require('./compiled').load('cli').runCommandLine(process.argv.slice(2));
