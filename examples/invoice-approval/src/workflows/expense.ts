import { sleep } from '@temporalio/workflow';
import { COST_CENTERS, type ExpenseOutcome, type ExpenseReport } from '../expense';
import { formatAmount, startWorkflowTask } from 'temporal-mcp-tasks/workflow';

/**
 * A second sample: checks each receipt (progress), asks the manager to approve, then asks finance for a cost
 * center (two inputs in sequence), and reimburses.
 */
export async function expenseReportWorkflow(report: ExpenseReport): Promise<ExpenseOutcome> {
  const task = startWorkflowTask(`Checking ${report.items.length} receipt(s) of ${report.employee}`);
  const steps = report.items.length + 2;
  const total = report.items.reduce((cents, item) => cents + Math.round(item.amount * 100), 0) / 100;
  for (const [index, item] of report.items.entries()) {
    await sleep('200 milliseconds');
    task.setProgress(index + 1, steps, `Checked receipt ${index + 1} of ${report.items.length}: ${item.description}`);
  }
  const base = { employee: report.employee, total, currency: report.currency };

  const approval = await task.requestInput('manager-approval', {
    message: `Approve ${report.employee}'s expenses of ${formatAmount(total, report.currency)}?`,
    requestedSchema: {
      type: 'object',
      properties: {
        approve: { type: 'boolean', title: 'Approve', description: 'Approve the reimbursement' },
        comment: { type: 'string', title: 'Comment', maxLength: 300 },
      },
      required: ['approve'],
    },
  });
  const approverComment = typeof approval.content?.comment === 'string' ? approval.content.comment : undefined;
  if (approval.action !== 'accept' || approval.content?.approve !== true) {
    return { ...base, status: 'rejected', ...(approverComment && { approverComment }) };
  }
  task.setProgress(report.items.length + 1, steps, 'Approved by the manager');

  const booking = await task.requestInput('cost-center', {
    message: `Which cost center pays ${report.employee}'s ${formatAmount(total, report.currency)}?`,
    requestedSchema: {
      type: 'object',
      properties: { costCenter: { type: 'string', title: 'Cost center', enum: [...COST_CENTERS] } },
      required: ['costCenter'],
    },
  });
  const costCenter = booking.action === 'accept' ? String(booking.content?.costCenter) : COST_CENTERS[0];
  await sleep('200 milliseconds');
  task.setProgress(steps, steps, `Reimbursed and booked to ${costCenter}`);
  return { ...base, status: 'reimbursed', costCenter, ...(approverComment && { approverComment }) };
}
