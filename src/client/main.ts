/**
 * A task-aware MCP command-line client: npm run client -- <command> [options]. See args.ts for its help.
 */
import { AnswerError } from './answers';
import { EXIT, HELP, UsageError, parseCommandLine } from './args';
import { NeedsInputError, UnreachableError, plainMessage } from './connection';
import { Runner } from './follow';
import { call, cancel, listTasks, resume } from './commands';
import { printable } from './printable';
import { PACKAGE_VERSION } from '../version';

/** Runs the command line; resolves to the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  let runner: Runner | undefined;
  try {
    const { command, positional, options } = parseCommandLine(argv);
    if (options.version && !options.help) {
      process.stdout.write(`${PACKAGE_VERSION}\n`);
      return EXIT.completed;
    }
    if (options.help || !command) {
      (options.help ? process.stdout : process.stderr).write(HELP);
      return options.help ? EXIT.completed : EXIT.usage;
    }
    runner = new Runner(options);
    switch (command) {
      case 'call':
        return await call(runner, positional[0], options);
      case 'tasks':
        return await listTasks(runner, options);
      case 'resume':
        return await resume(runner, positional[0]);
      case 'result': {
        if (!positional[0]) throw new UsageError('result needs a task id');
        const stored = runner.store.task(positional[0]);
        return runner.report(await runner.follow(positional[0], runner.target(stored), true));
      }
      case 'cancel':
        return await cancel(runner, positional[0]);
      default:
        throw new UsageError(`unknown command "${command}"; see --help`);
    }
  } catch (error) {
    runner?.progress.end();
    const message = plainMessage(error);
    if (error instanceof UsageError || error instanceof AnswerError) {
      process.stderr.write(`client: ${printable(message)}\n`);
      return EXIT.usage;
    }
    if (error instanceof UnreachableError) {
      process.stderr.write(`client: ${printable(message)}\n`);
      return EXIT.unreachable;
    }
    if (error instanceof NeedsInputError) {
      process.stderr.write(`client: ${printable(message)}\n`);
      return EXIT.needsInput;
    }
    process.stderr.write(`client: ${printable(message)}\n`);
    return EXIT.error;
  }
}

/** Runs the command line and exits the process with its exit code (`temporal-mcp-tasks client`). */
export function runClientCommand(argv: string[]): void {
  runCli(argv).then(
    (code) => process.exit(code),
    (error: Error) => {
      process.stderr.write(`client: ${printable(error.message)}\n`);
      process.exit(EXIT.error);
    },
  );
}

if (require.main === module) runClientCommand(process.argv.slice(2));
