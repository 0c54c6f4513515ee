import { startWorkflowTask } from 'temporal-mcp-tasks/workflow';

/** Workflow type name; stored in histories, never rename. */
export const VENDOR_ONBOARDING_WORKFLOW_TYPE = 'vendorOnboardingWorkflow';

/**
 * A sample of questions asked in parallel: the tax id and the bank account of a new vendor are two open questions at
 * once, answered in any order (a 2026-07-28 client sees both; a 2025-11-25 client is asked one after the other).
 */
export async function vendorOnboardingWorkflow(request: {
  vendorName: string;
}): Promise<{ vendorName: string; active: boolean; taxId?: string; iban?: string }> {
  const task = startWorkflowTask(`Collecting the details of ${request.vendorName}`);
  const [tax, bank] = await Promise.all([
    task.requestInput('tax-id', {
      message: `What is the tax id of ${request.vendorName}?`,
      requestedSchema: {
        type: 'object',
        properties: { taxId: { type: 'string', title: 'Tax id', minLength: 4, maxLength: 20 } },
        required: ['taxId'],
      },
    }),
    task.requestInput('bank-account', {
      message: `Which bank account (IBAN) should ${request.vendorName} be paid to?`,
      requestedSchema: {
        type: 'object',
        properties: { iban: { type: 'string', title: 'IBAN', minLength: 15, maxLength: 34 } },
        required: ['iban'],
      },
    }),
  ]);
  task.setStatus(`Activating ${request.vendorName}`);
  const taxId = typeof tax.content?.taxId === 'string' ? tax.content.taxId : undefined;
  const iban = typeof bank.content?.iban === 'string' ? bank.content.iban : undefined;
  return {
    vendorName: request.vendorName,
    active: taxId !== undefined && iban !== undefined,
    ...(taxId && { taxId }),
    ...(iban && { iban }),
  };
}
