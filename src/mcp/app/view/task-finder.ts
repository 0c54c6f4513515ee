/**
 * Finds the task a tool call started when the host hands the view only the call's arguments (a host that follows the
 * task itself, and may never say how it ended): asks `task_find` with back-off until the server names the task.
 */
import { readFound, type TaskTools, type ToolResult } from './tools';

/** How long the host has to hand over a result naming the task before the view looks for it itself. */
const FIRST_LOOK_MS = 1500;
/** The longest pause between two looks. */
const MAX_PAUSE_MS = 10_000;
/** The server looks this far back (`task_find`): the view gives up then. */
const GIVE_UP_MS = 10 * 60_000;

/** Looks for the task of one call until it is found, the call is answered otherwise, or {@link GIVE_UP_MS} passes. */
export class TaskFinder {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(
    private readonly tools: TaskTools,
    /** Called once with the task's id, and a way to ask about the task by its call again. */
    private readonly found: (taskId: string, byCall: () => Promise<ToolResult>) => void,
  ) {}

  /**
   * Starts looking for the task of `tool` called with `args`, after {@link FIRST_LOOK_MS}; `tool` unknown (a host that
   * does not say which tool the view was opened on): the task of any tool called with them.
   */
  start(tool: string | undefined, args: Record<string, unknown>): void {
    if (this.timer !== undefined || this.stopped) return;
    const giveUpAt = Date.now() + GIVE_UP_MS;
    const look = async (pause: number): Promise<void> => {
      this.timer = undefined;
      if (this.stopped) return;
      try {
        const byCall = () => this.tools.find(tool, args);
        const answer = await byCall();
        // A tool error (no such tool here, an older server, arguments that start nothing) will not change.
        if (answer.isError) return this.stop();
        const taskId = readFound(answer.structuredContent);
        if (taskId && !this.stopped) {
          this.stop();
          this.found(taskId, byCall);
          return;
        }
      } catch {
        // The host or server could not be reached: looked for again after the next pause.
      }
      if (this.stopped || Date.now() + pause > giveUpAt) return;
      this.timer = setTimeout(() => void look(Math.min(MAX_PAUSE_MS, pause * 1.5)), pause);
    };
    this.timer = setTimeout(() => void look(FIRST_LOOK_MS), FIRST_LOOK_MS);
  }

  /** Stops looking: the task is known, or the call was answered or cancelled otherwise. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
