/**
 * Two approvals of an invoice that needs two, taken in one workflow task: both Updates wait while no worker polls, and
 * the worker that comes back accepts them together. Their seal checks (local activities the Update handlers await) must
 * leave a history that replays: a worker that restarts after them, or any later worker, goes on with the invoice.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Worker } from '@temporalio/worker';
import { openDecisionStore } from '../../src/approvals/records/store';
import type { Bridge } from '../../src/mcp/bridge';
import type { InvoiceResult } from '../../src/shared/invoice';
import { pollUntil } from '../../src/util/wait';
import { answer, textOf } from '../helpers/approvals';
import { taskResult } from '../helpers/mcp';
import { sampleInvoice, testWorkflowBundle } from '../helpers/temporal';
import { startStack, type TestStack } from '../helpers/test-stack';

const ROLE = 'ap-approver';
let stack: TestStack;
let requesterBridge: Bridge;
let annBridge: Bridge;
let bobBridge: Bridge;

beforeAll(async () => {
  stack = await startStack({
    name: 'concurrent-answers',
    activities: { invoiceApproval: { approvers: 'role', role: ROLE, secondApproverAbove: 100 } },
  });
  [requesterBridge, annBridge, bobBridge] = await Promise.all([
    stack.addBridge({ principal: 'sam-concurrent', roles: [] }),
    stack.addBridge({ principal: 'ann-concurrent', roles: [ROLE] }),
    stack.addBridge({ principal: 'bob-concurrent', roles: [ROLE] }),
  ]);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

async function connect(bridge: Bridge): Promise<McpClient> {
  const client = new McpClient({ name: 'concurrent-answers', version: '1.0.0' }, { capabilities: { tasks: { requests: {} } } });
  await stack.connect(client, bridge);
  return client;
}

test('two approvals accepted in one workflow task replay, and the invoice is paid once after a worker restart', async () => {
  const [sam, ann, bob] = await Promise.all([connect(requesterBridge), connect(annBridge), connect(bobBridge)]);
  const created = await sam.request(
    { method: 'tools/call', params: { name: 'process_invoice', arguments: sampleInvoice() as never, task: {} } },
    CreateTaskResultSchema,
  );
  const { taskId } = created.task;
  await pollUntil(
    () =>
      annBridge.approvals.question(taskId, 'approval', { principal: 'ann-concurrent', roles: [ROLE] }).then(
        () => true,
        () => undefined,
      ),
    { timeoutMs: 60_000, intervalMs: 100, what: `the question of ${taskId} to open` },
  );

  // Nothing polls: both Updates wait on the server and are handed over together to the next worker.
  await stack.stopWorker();
  const answering = [answer(ann, taskId, 'approve'), answer(bob, taskId, 'approve')];
  // Each bridge appends its decision record just before it sends its Update.
  const store = openDecisionStore(stack.activities.decisionStore!);
  await pollUntil(async () => ((await store.records(taskId)).length >= 2 ? true : undefined), {
    timeoutMs: 30_000,
    what: 'both decision records',
  });
  await stack.startWorker();
  const answered = await Promise.all(answering);
  for (const result of answered) {
    expect(result.isError).toBeFalsy();
    expect(textOf(result as CallToolResult)).toBe(`Your answer to "approval" on task ${taskId} is recorded.`);
  }

  // A worker that starts now replays the history of both answers.
  await stack.stopWorker();
  const handle = stack.temporal.workflow.getHandle(taskId);
  await Worker.runReplayHistory({ workflowBundle: testWorkflowBundle() }, await handle.fetchHistory(), taskId);
  await stack.startWorker();
  const result = (await taskResult(sam, taskId)).structuredContent as unknown as InvoiceResult;
  expect(result).toMatchObject({ outcome: 'paid' });
  expect(result.approval?.approvers?.map((approver) => approver.principal).sort()).toEqual(['ann-concurrent', 'bob-concurrent']);
}, 180_000);
