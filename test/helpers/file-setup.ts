/**
 * Jest setup of every test file:
 * - the in-process server and worker log warnings and errors only, as before they had a log (spawned processes log as
 *   configured; the tests read their info lines);
 * - the file's requests without credentials act for a local principal of its own, so that the tasks of files running
 *   at the same time never share a principal (`local:test-…`, a local name as the OS user's is): a listing sees the
 *   file's own tasks only, and its first page is theirs.
 *   Servers and workers the file spawns with its environment (`process.env`, as the helpers pass it) act for it too.
 */
import { randomUUID } from 'node:crypto';
import { log } from '../../src/util/log';

log.configure({ level: 'warn' });
process.env.MCP_LOCAL_PRINCIPAL ??= `local:test-${randomUUID().slice(0, 8)}`;
