/**
 * Waiting with a deadline, for the server, the client, the scripts and the tests: a sleep that an abort signal ends
 * early, a poll that gives up after a timeout, and a retry with exponential backoff.
 */

/** Resolves after `ms`, or as soon as `signal` aborts (it never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Resolves once `stream` wants more data after a write that filled its buffer (back-pressure), or when `signal` aborts. */
export function drained(stream: NodeJS.WritableStream, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    stream.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Options of {@link pollUntil}. */
export interface PollOptions {
  /** Give up once this long has passed since the first check. */
  timeoutMs: number;
  /** What is awaited, for the timeout message ("timed out waiting for <what>"); a function is asked at the timeout. */
  what: string | (() => string);
  /** Pause between checks; default 50 ms. */
  intervalMs?: number;
  /** When above `intervalMs`, the pause doubles after each check up to this. */
  maxIntervalMs?: number;
}

/**
 * Calls `check` until it returns something other than undefined, and returns that. Throws "timed out waiting for
 * <what>" when a check comes back empty after `timeoutMs`; an error `check` throws ends the wait at once.
 */
export async function pollUntil<T>(
  check: () => Promise<T | undefined> | T | undefined,
  { timeoutMs, what, intervalMs = 50, maxIntervalMs = intervalMs }: PollOptions,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = intervalMs; ; delay = Math.min(delay * 2, maxIntervalMs)) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await sleep(delay);
  }
}

/** The pause after `failuresInRow` failures in a row (1 or more): `firstMs`, doubled at each further one, at most `maxMs`. */
export function backoffMs(failuresInRow: number, firstMs: number, maxMs: number): number {
  return Math.min(firstMs * 2 ** Math.max(0, failuresInRow - 1), maxMs);
}

/** Options of {@link retryWithBackoff}. */
export interface RetryOptions {
  /** Whether a failure may go away by itself (an outage, a lost connection); any other failure is thrown at once. */
  isRetryable(error: unknown): boolean;
  /** Time (ms since the epoch) after which no retry starts: the last failure is thrown instead. */
  deadline: number;
  /** First pause; default 250 ms. It doubles after each failure up to `maxDelayMs`. */
  initialDelayMs?: number;
  /** Longest pause; default 5 s. */
  maxDelayMs?: number;
  /** Called before each pause, with the failure and the number of the attempt that failed (0 for the first). */
  onRetry?(error: unknown, attempt: number): void;
}

/**
 * Runs `attempt` until it succeeds. A retryable failure is followed by a pause and another attempt, unless the pause
 * would end past the deadline; then, and for any other failure, the failure is thrown.
 */
export async function retryWithBackoff<T>(
  attempt: () => Promise<T>,
  { isRetryable, deadline, initialDelayMs = 250, maxDelayMs = 5_000, onRetry }: RetryOptions,
): Promise<T> {
  for (let count = 0; ; count++) {
    try {
      return await attempt();
    } catch (error) {
      const delay = backoffMs(count + 1, initialDelayMs, maxDelayMs);
      if (!isRetryable(error) || Date.now() + delay > deadline) throw error;
      onRetry?.(error, count);
      await sleep(delay);
    }
  }
}
