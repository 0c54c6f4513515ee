import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { DEFAULT_INVOICE_APPROVER_ROLE, type Invoice, type InvoiceApprovalPolicy } from '../invoice';
import {
  decisionStoreLocation,
  heartbeatingSleep,
  notificationDeliveryFromEnv,
  notificationOutboxFromEnv,
  type NotificationDeliveryConfig,
} from 'temporal-mcp-tasks';
import { FixtureErp, type ErpCheck } from './erp';
import { PaymentsLedger, type LedgerEntry, type PaymentRequest } from './payments';

/** Where the activities keep their files, and how the simulated payment gateway behaves. */
export interface ActivityConfig {
  /** The payments ledger: a directory of one JSON file per payment. */
  ledgerDir: string;
  /** The fixture ERP's invoice registry: a directory of one JSON file per registration and release. */
  erpRegistryDir: string;
  /** Simulated ERP latency per validation, in ms. */
  erpDelayMs: number;
  /** Simulated gateway latency per payment, in ms. */
  paymentDelayMs: number;
  /** The first N attempts of each payment fail, as a flaky gateway would. */
  paymentFailAttempts: number;
  /** Who approves invoices. */
  invoiceApproval: InvoiceApprovalPolicy;
  /** The JSON-lines file notifications about approvals go to. */
  notificationOutbox: string;
  /**
   * The decision store the bridge appends signed decision records to, and the payments are checked against: a
   * directory, or a `postgres://` URL. The bridge must be given the same (MCP_DECISION_STORE).
   */
  decisionStore: string;
  /** Who is reached about approvals, by webhook and mail, besides the outbox; without it, the outbox only. */
  notificationDelivery?: NotificationDeliveryConfig;
}

/**
 * What validateInvoice answers. `registered` is always false: checking registers nothing. (Validations of earlier
 * versions registered the invoice number and answered without the field; workflows that saw such an answer release it.)
 */
export type InvoiceValidation = ErpCheck & { registered?: boolean };

/**
 * Reads {@link ActivityConfig} from the environment: PAYMENTS_LEDGER, ERP_REGISTRY, ERP_DELAY_MS, PAYMENT_DELAY_MS,
 * PAYMENT_FAIL_ATTEMPTS, NOTIFICATION_OUTBOX, MCP_DECISION_STORE, the INVOICE_* approval settings (see
 * {@link invoiceApprovalPolicyFromEnv}) and the delivery of notifications (MCP_APPROVERS_DIRECTORY and the others of
 * {@link notificationDeliveryFromEnv}). The directories default to `.data/` in the current folder (the checkout, for
 * the npm scripts), never inside an installed package. Throws naming a bad setting.
 */
export function activityConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ActivityConfig {
  const dataDir = path.resolve('.data');
  return {
    ledgerDir: path.resolve(env.PAYMENTS_LEDGER ?? path.join(dataDir, 'payments')),
    erpRegistryDir: path.resolve(env.ERP_REGISTRY ?? path.join(dataDir, 'erp-invoices')),
    erpDelayMs: nonNegativeInt(env.ERP_DELAY_MS, 'ERP_DELAY_MS'),
    paymentDelayMs: nonNegativeInt(env.PAYMENT_DELAY_MS, 'PAYMENT_DELAY_MS'),
    paymentFailAttempts: nonNegativeInt(env.PAYMENT_FAIL_ATTEMPTS, 'PAYMENT_FAIL_ATTEMPTS'),
    invoiceApproval: invoiceApprovalPolicyFromEnv(env),
    notificationOutbox: notificationOutboxFromEnv(env),
    decisionStore: decisionStoreLocation(env),
    notificationDelivery: notificationDeliveryFromEnv(env),
  };
}

const ROLE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,99}$/;

/**
 * Who approves invoices, from INVOICE_APPROVER_ROLE (default `ap-approver`; `requester`: the submitter approves their
 * own), INVOICE_SECOND_APPROVER_ABOVE (default 10000), INVOICE_APPROVAL_REMIND_AFTER_MS (default one day),
 * INVOICE_APPROVAL_ESCALATE_AFTER_MS with INVOICE_ESCALATION_ROLE (default three days to `ap-manager`; `none`: no
 * escalation) and INVOICE_APPROVAL_EXPIRE_AFTER_MS (default never). Throws naming a bad setting.
 */
export function invoiceApprovalPolicyFromEnv(env: NodeJS.ProcessEnv = process.env): InvoiceApprovalPolicy {
  const role = env.INVOICE_APPROVER_ROLE?.trim() || DEFAULT_INVOICE_APPROVER_ROLE;
  if (role === 'requester') return { approvers: 'requester' };
  const escalateTo = env.INVOICE_ESCALATION_ROLE?.trim() || 'ap-manager';
  for (const [name, value] of [
    ['INVOICE_APPROVER_ROLE', role],
    ['INVOICE_ESCALATION_ROLE', escalateTo],
  ]) {
    if (!ROLE_PATTERN.test(value)) throw new Error(`${name} "${value}" is not a role name (letters, digits, . _ : @ / -)`);
  }
  const above = env.INVOICE_SECOND_APPROVER_ABOVE?.trim() ? Number(env.INVOICE_SECOND_APPROVER_ABOVE) : 10_000;
  if (!Number.isFinite(above) || above < 0) {
    throw new Error(`INVOICE_SECOND_APPROVER_ABOVE must be an amount of 0 or more, not "${env.INVOICE_SECOND_APPROVER_ABOVE}"`);
  }
  const remindAfterMs = optionalMs(env, 'INVOICE_APPROVAL_REMIND_AFTER_MS', 86_400_000);
  const escalateAfterMs = optionalMs(env, 'INVOICE_APPROVAL_ESCALATE_AFTER_MS', 3 * 86_400_000);
  const expireAfterMs = optionalMs(env, 'INVOICE_APPROVAL_EXPIRE_AFTER_MS', undefined);
  if (expireAfterMs !== undefined && escalateAfterMs !== undefined && escalateTo !== 'none' && expireAfterMs <= escalateAfterMs) {
    throw new Error('INVOICE_APPROVAL_EXPIRE_AFTER_MS must be longer than INVOICE_APPROVAL_ESCALATE_AFTER_MS');
  }
  return {
    approvers: 'role',
    role,
    secondApproverAbove: above,
    ...(remindAfterMs !== undefined && { remindAfterMs }),
    ...(escalateAfterMs !== undefined && escalateTo !== 'none' && { escalateAfterMs, escalateTo }),
    ...(expireAfterMs !== undefined && { expireAfterMs }),
  };
}

/** A duration in ms from `env[name]`: `fallback` when unset, none when `never`; throws naming a bad value. */
function optionalMs(env: NodeJS.ProcessEnv, name: string, fallback: number | undefined): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'never') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`${name} must be a whole number of milliseconds above 0 or "never", not "${raw}"`);
  return value;
}

function nonNegativeInt(value: string | undefined, name: string): number {
  if (value === undefined || value === '') return 0;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`${name} must be a whole number of 0 or more, not "${value}"`);
  return parsed;
}

/**
 * Copies what earlier versions kept in JSON-lines files (`<ledgerDir>.jsonl`, `<erpRegistryDir>.jsonl`: the old
 * defaults) into the directories, so that a payment retried across the upgrade finds its first attempt, and renames
 * each file to `<file>.imported`. Run it before the first worker of the new version polls, with the old ones stopped.
 * Returns how many records each file held (undefined: no such file). Throws when a configured directory is a file (a
 * setting left from an earlier version).
 */
export async function importJsonLinesFiles(config: ActivityConfig): Promise<{ payments?: number; registrations?: number }> {
  for (const [variable, dir] of [
    ['PAYMENTS_LEDGER', config.ledgerDir],
    ['ERP_REGISTRY', config.erpRegistryDir],
  ]) {
    if ((await fs.stat(dir).catch(() => undefined))?.isFile()) {
      throw new Error(
        `${variable} is ${dir}, a file; it names a directory now (one file per record). Point it at a directory: ` +
          `a JSON-lines file of an earlier version at <directory>.jsonl is imported into it at start`,
      );
    }
  }
  const payments = await new PaymentsLedger(config.ledgerDir).importJsonLines(`${config.ledgerDir}.jsonl`);
  const registrations = await new FixtureErp(config.erpRegistryDir).importJsonLines(`${config.erpRegistryDir}.jsonl`);
  return { payments, registrations };
}

/**
 * The invoice activities, bound to their directories (default: from the environment, see {@link activityConfigFromEnv});
 * a worker registers `createTaskActivities()` beside them, as `temporal-mcp-tasks worker --activities` does.
 */
export function createActivities(config: ActivityConfig = activityConfigFromEnv()) {
  const erp = new FixtureErp(config.erpRegistryDir);
  const ledger = new PaymentsLedger(config.ledgerDir);
  return {
    /** Who approves invoices on this worker's deployment (read once per invoice, kept in its history). */
    async invoiceApprovalPolicy(): Promise<InvoiceApprovalPolicy> {
      return config.invoiceApproval;
    },

    /** Checks the vendor and the invoice number against the ERP. Registers nothing. */
    async validateInvoice(taskId: string, invoice: Invoice): Promise<InvoiceValidation> {
      if (config.erpDelayMs > 0) await heartbeatingSleep(config.erpDelayMs);
      return { ...(await erp.validate(taskId, invoice)), registered: false };
    },

    /** Checks the invoice again and registers its number to this task, now that it is approved for payment. */
    async registerInvoice(taskId: string, invoice: Invoice): Promise<ErpCheck> {
      if (config.erpDelayMs > 0) await heartbeatingSleep(config.erpDelayMs);
      return erp.register(taskId, invoice);
    },

    /** Releases the invoice number if this task holds it (it ends without paying anything). Returns whether it did. */
    async releaseInvoice(taskId: string, invoice: Invoice): Promise<boolean> {
      return erp.release(taskId, invoice);
    },

    /** Pays one line item exactly once, keyed by task and line item. */
    async payLineItem(request: PaymentRequest): Promise<LedgerEntry> {
      const { attempt } = Context.current().info;
      if (config.paymentDelayMs > 0) await heartbeatingSleep(config.paymentDelayMs);
      if (attempt <= config.paymentFailAttempts) {
        throw ApplicationFailure.retryable(`payment gateway unavailable (simulated failure of attempt ${attempt})`, 'GatewayUnavailable');
      }
      const { entry, created } = await ledger.pay(request);
      log.info(created ? 'paid line item' : 'line item was already paid', { key: entry.key, paymentId: entry.paymentId });
      return entry;
    },

    /** The ledger's payments of these line items of the task (those that were paid), in the order given. */
    async findPayments(taskId: string, lineItemIds: string[]): Promise<LedgerEntry[]> {
      const found = await Promise.all(lineItemIds.map((lineItemId) => ledger.find(taskId, lineItemId)));
      return found.filter((entry): entry is LedgerEntry => entry !== undefined);
    },
  };
}

/** The activity interface the workflow proxies. */
export type InvoiceActivities = ReturnType<typeof createActivities>;
