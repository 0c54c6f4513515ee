/**
 * The page's two live regions: `#notice` (role=status) says what happened, `#problem` (role=alert) what went wrong.
 * Both are in the document from the start, so that screen readers announce what is written into them.
 */
export class Messages {
  constructor(
    private readonly notice: HTMLElement,
    private readonly problem: HTMLElement,
  ) {}

  /** Says what happened (and clears the problem shown). */
  say(text: string): void {
    this.problem.textContent = '';
    this.notice.textContent = text;
  }

  /** Says what went wrong. */
  warn(text: string): void {
    this.problem.textContent = text;
  }

  clear(): void {
    this.notice.textContent = '';
    this.problem.textContent = '';
  }
}
