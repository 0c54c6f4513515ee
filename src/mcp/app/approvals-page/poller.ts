/**
 * A refresh that repeats while the page is visible: one run at a time (the next is timed from the end of the last),
 * paused while the tab is hidden and run at once when it shows again.
 */
export class Poller {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private started = false;

  constructor(
    private readonly run: () => Promise<void>,
    private readonly everyMs: number,
  ) {
    document.addEventListener('visibilitychange', () => {
      if (!this.started) return;
      if (document.hidden) this.clear();
      else void this.tick();
    });
  }

  /** Starts (again) from now: the first run is `everyMs` away. */
  start(): void {
    this.started = true;
    this.schedule();
  }

  stop(): void {
    this.started = false;
    this.clear();
  }

  private schedule(): void {
    this.clear();
    if (this.started && !document.hidden) this.timer = setTimeout(() => void this.tick(), this.everyMs);
  }

  private clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    // A run still under way schedules the next when it ends.
    if (!this.started || document.hidden || this.running) return;
    this.clear();
    this.running = true;
    try {
      await this.run();
    } catch {
      // The run shows its own problems; the refresh goes on.
    } finally {
      this.running = false;
      this.schedule();
    }
  }
}
