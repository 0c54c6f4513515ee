/**
 * Jest setup of every test file: the in-process server and worker log warnings and errors only, as before they had a
 * log (spawned processes log as configured; the tests read their info lines).
 */
import { log } from '../../src/util/log';

log.configure({ level: 'warn' });
