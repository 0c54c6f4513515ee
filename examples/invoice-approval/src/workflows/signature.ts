import { workflowInfo } from '@temporalio/workflow';
import { startWorkflowTask } from 'temporal-mcp-tasks/workflow';

/** Workflow type name; stored in histories, never rename. */
export const SIGNATURE_WORKFLOW_TYPE = 'contractSignatureWorkflow';

/** A sample of URL-mode input: the signer is sent to a signing page and says whether they signed. */
export async function contractSignatureWorkflow(request: {
  contractId: string;
  signer: string;
}): Promise<{ contractId: string; signed: boolean }> {
  const task = startWorkflowTask(`Preparing contract ${request.contractId} for ${request.signer}`);
  const answer = await task.requestInput('signature', {
    mode: 'url',
    message: `${request.signer}, please sign contract ${request.contractId}.`,
    url: `https://sign.example.com/contracts/${encodeURIComponent(request.contractId)}?task=${encodeURIComponent(workflowInfo().workflowId)}`,
    elicitationId: `${workflowInfo().workflowId}/signature`,
  });
  return { contractId: request.contractId, signed: answer.action === 'accept' };
}
