/**
 * How `serve` stops: on a signal or at the end of its input it drains what is under way, closes the bridge and flushes
 * the traces, then exits the process, within a bound whatever it is doing.
 */
import type { Telemetry } from '../../shared/telemetry';
import { log } from '../../util/log';
import type { Bridge } from '../bridge';

/** What stops the server: a signal, or the end of stdin (quietly: the host closed it). */
export type StopCause = NodeJS.Signals | 'end of input';

/**
 * Ends the process once `drain` is done, or after the bound whatever it is doing; a second signal changes nothing.
 * Exits 0 when stopped cleanly, 1 when stopping failed or took too long.
 */
export type StopOn = (signal: StopCause, drain: () => Promise<void>) => void;

/** The {@link StopOn} of a server: drains, closes `bridge`, shuts `telemetry` down, within `shutdownTimeoutMs` and 2 s more. */
export function gracefulStop(bridge: Bridge, telemetry: Telemetry, shutdownTimeoutMs: number): StopOn {
  let stopping = false;
  return (signal, drain) => {
    if (stopping) return;
    stopping = true;
    if (signal !== 'end of input') log.info(`serve: ${signal}: stopping (at most ${shutdownTimeoutMs} ms)`);
    setTimeout(() => {
      log.error(`serve: still stopping after ${shutdownTimeoutMs + 2000} ms; exiting`);
      process.exit(1);
    }, shutdownTimeoutMs + 2000).unref();
    void drain()
      .then(() => bridge.close())
      .then(() => telemetry.shutdown())
      .then(
        () => {
          if (signal !== 'end of input') log.info('serve: stopped');
          process.exit(0);
        },
        (error: Error) => {
          log.error(`serve: stopping failed: ${error.message}`);
          process.exit(1);
        },
      );
  };
}
