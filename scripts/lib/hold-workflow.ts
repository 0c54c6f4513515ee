/**
 * The bench's hold workflow when a worker runs it (the change feed's rows): it publishes once, which stamps its change
 * as every workflow of the helpers does, then waits until it is cancelled, costing nothing more.
 */
import { condition } from '@temporalio/workflow';
import { startWorkflowTask } from '../../src/workflow';

export async function benchHoldWorkflow(): Promise<void> {
  startWorkflowTask('Held');
  await condition(() => false);
}
