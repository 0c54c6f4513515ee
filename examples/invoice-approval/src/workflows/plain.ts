import { sleep } from '@temporalio/workflow';

/** Workflow type name; stored in histories, never rename. */
export const REPORT_WORKFLOW_TYPE = 'salesReportWorkflow';

/** A workflow that knows nothing of MCP: the bridge reports it as working until it returns. */
export async function salesReportWorkflow(request: { region: string }): Promise<{ region: string; orders: number; revenue: number }> {
  await sleep('1 second');
  const orders = request.region.length * 7;
  return { region: request.region, orders, revenue: orders * 125 };
}
