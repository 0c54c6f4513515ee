/** Every workflow the worker registers. */
export { invoiceWorkflow } from './invoice';
export { expenseReportWorkflow } from './expense';
export { timeOffRequestWorkflow } from './raw-contract';
export { salesReportWorkflow } from './plain';
export { contractSignatureWorkflow } from './signature';
export { vendorOnboardingWorkflow } from './onboarding';
export { spendApprovalWorkflow } from './spend';
