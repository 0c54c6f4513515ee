/** Who approves invoices, as the worker reads it from its environment (the INVOICE_* settings). */
import { invoiceApprovalPolicyFromEnv } from '../src/activities';

test('the invoice approval policy: a role by default, the submitter on request, and clear errors for bad settings', () => {
  expect(invoiceApprovalPolicyFromEnv({})).toEqual({
    approvers: 'role',
    role: 'ap-approver',
    secondApproverAbove: 10_000,
    remindAfterMs: 86_400_000,
    escalateAfterMs: 259_200_000,
    escalateTo: 'ap-manager',
  });
  expect(invoiceApprovalPolicyFromEnv({ INVOICE_APPROVER_ROLE: 'requester' })).toEqual({ approvers: 'requester' });
  expect(
    invoiceApprovalPolicyFromEnv({
      INVOICE_APPROVER_ROLE: 'finance',
      INVOICE_SECOND_APPROVER_ABOVE: '500',
      INVOICE_APPROVAL_REMIND_AFTER_MS: 'never',
      INVOICE_ESCALATION_ROLE: 'none',
      INVOICE_APPROVAL_EXPIRE_AFTER_MS: '60000',
    }),
  ).toEqual({ approvers: 'role', role: 'finance', secondApproverAbove: 500, expireAfterMs: 60_000 });
  expect(() => invoiceApprovalPolicyFromEnv({ INVOICE_APPROVER_ROLE: 'a b' })).toThrow('INVOICE_APPROVER_ROLE "a b" is not a role name');
  expect(() => invoiceApprovalPolicyFromEnv({ INVOICE_SECOND_APPROVER_ABOVE: 'lots' })).toThrow(/INVOICE_SECOND_APPROVER_ABOVE must be/);
  expect(() => invoiceApprovalPolicyFromEnv({ INVOICE_APPROVAL_REMIND_AFTER_MS: '1.5' })).toThrow(/whole number of milliseconds/);
  expect(() => invoiceApprovalPolicyFromEnv({ INVOICE_APPROVAL_EXPIRE_AFTER_MS: '1000' })).toThrow(
    'INVOICE_APPROVAL_EXPIRE_AFTER_MS must be longer than INVOICE_APPROVAL_ESCALATE_AFTER_MS',
  );
});
