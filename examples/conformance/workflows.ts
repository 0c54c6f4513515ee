/**
 * The fixture tools of the MCP conformance suite's task scenarios, as Temporal workflows (served by
 * examples/conformance/tools.yaml and run by examples/conformance/worker.ts). Sandboxed workflow code.
 */
import { ApplicationFailure, sleep } from '@temporalio/workflow';
import { PROTOCOL_ERROR_FAILURE_TYPE, startWorkflowTask } from 'temporal-mcp-tasks/workflow';

type TextResult = { content: { type: 'text'; text: string }[] };

const text = (value: string): TextResult => ({ content: [{ type: 'text', text: value }] });

/** `greet`: answers at once; never runs as a task. `test_tool_with_task` runs it with the name asked before start. */
export async function greetWorkflow(args: { name?: string; asked?: { name?: string } }): Promise<TextResult> {
  return text(`Hello, ${args.name ?? args.asked?.name ?? 'world'}!`);
}

/** `slow_compute`: takes `seconds` on a durable timer (cancellable), then reports. */
export async function slowComputeWorkflow(args: { seconds?: number; label?: string }): Promise<TextResult> {
  const seconds = args.seconds ?? 1;
  const label = args.label ?? 'computation';
  const task = startWorkflowTask(`Computing ${label} (${seconds} s)`);
  await sleep(seconds * 1000);
  task.setStatus(`Finished ${label}`);
  return text(`Computed ${label} in ${seconds} s`);
}

/** `failing_job`: ends with a tool error (a result with isError). */
export async function failingJobWorkflow(): Promise<TextResult> {
  throw ApplicationFailure.nonRetryable('The job failed: the input could not be processed', 'JobFailed');
}

/** `protocol_error_job`: ends with a JSON-RPC error (the task is failed). */
export async function protocolErrorJobWorkflow(): Promise<TextResult> {
  throw ApplicationFailure.create({
    message: 'The job could not run: internal error',
    type: PROTOCOL_ERROR_FAILURE_TYPE,
    nonRetryable: true,
    details: [{ code: -32603 }],
  });
}

/** `confirm_delete`: asks for a confirmation, then reports what it did. */
export async function confirmDeleteWorkflow(args: { filename?: string }): Promise<TextResult> {
  const filename = args.filename ?? 'the file';
  const task = startWorkflowTask(`Preparing to delete ${filename}`);
  const answer = await task.requestInput('confirm', {
    message: `Delete ${filename}?`,
    requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', title: 'Confirm' } }, required: ['confirm'] },
  });
  const confirmed = answer.action === 'accept' && answer.content?.confirm === true;
  return text(confirmed ? `Deleted ${filename}` : `Kept ${filename}`);
}

/** `multi_input`: two questions open at once, answered in any order. */
export async function multiInputWorkflow(): Promise<TextResult> {
  const task = startWorkflowTask('Collecting a name and a confirmation');
  const [name, confirm] = await Promise.all([
    task.requestInput('name', {
      message: 'What is your name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string', title: 'Name' } }, required: ['name'] },
    }),
    task.requestInput('confirm', {
      message: 'Do you confirm?',
      requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', title: 'Confirm' } }, required: ['confirm'] },
    }),
  ]);
  return text(`Name: ${String(name.content?.name ?? '-')}; confirmed: ${String(confirm.content?.confirm === true)}`);
}
