/**
 * Progress on stderr while a task is followed.
 */
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { type Task } from '@modelcontextprotocol/sdk/types.js';
import { printable } from './printable';

/** Progress on stderr: a live line on a terminal, plain lines otherwise. */
export class Progress {
  private live = false;
  /** While a form is on screen, status lines wait: they would overwrite the prompt. */
  paused = false;
  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}

  status(task: Task): void {
    if (this.paused) return;
    const line = printable(`task ${task.taskId}: ${task.status}${task.statusMessage ? ` — ${task.statusMessage}` : ''}`).replace(
      /\n/g,
      ' ',
    );
    if (this.stream.isTTY) {
      const width = this.stream.columns ?? 120;
      this.stream.write(`\r\x1b[2K${line.length > width - 1 ? `${line.slice(0, width - 2)}…` : line}`);
      this.live = true;
      if (isTerminal(task.status)) this.end();
    } else this.stream.write(`${line}\n`);
  }

  note(message: string): void {
    this.end();
    this.stream.write(`${printable(message)}\n`);
  }

  end(): void {
    if (this.live) this.stream.write('\n');
    this.live = false;
  }
}
