/**
 * The seal checks of one workflow run, one at a time. A seal check is a local activity that a signal or Update handler
 * awaits; when two answers (or a release) arrive in one workflow task, their checks would run side by side, and a
 * worker that replays the history resolves side-by-side local activities in the order they were scheduled, not the
 * order they finished in: the handlers then go on in another order than they did, and the replay fails as
 * nondeterministic. Checked one after the other, the order they finish in is the order they were scheduled in.
 * Import only from workflow code.
 */
import { patched } from '@temporalio/workflow';

/**
 * Patch: a seal check that arrives while another runs waits for it. Asked only then, so histories in which no two
 * checks met replay as before, with or without it.
 */
export const SERIAL_SEAL_CHECKS_PATCH = 'mcp-serial-seal-checks';

// Per run: each workflow run has module state of its own.
let running = 0;
const waiting: (() => void)[] = [];

/** Runs `check` once no other seal check of this run is under way (see the module's comment). */
export async function oneSealCheckAtATime<T>(check: () => Promise<T>): Promise<T> {
  // A check that waits takes over the place of the one it waited for (see `finally`): none can slip in between.
  if (running > 0 && patched(SERIAL_SEAL_CHECKS_PATCH)) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await check();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}
