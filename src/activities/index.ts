import path from 'node:path';
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Invoice } from '../shared/invoice';
import { FixtureErp, type ErpCheck } from './erp';
import { PaymentsLedger, type LedgerEntry, type PaymentRequest } from './payments';

/** Where the activities keep their files, and how the simulated payment gateway behaves. */
export interface ActivityConfig {
  /** The payments ledger (JSON lines). */
  ledgerFile: string;
  /** The fixture ERP's invoice registry (JSON lines). */
  erpRegistryFile: string;
  /** Simulated ERP latency per validation, in ms. */
  erpDelayMs: number;
  /** Simulated gateway latency per payment, in ms. */
  paymentDelayMs: number;
  /** The first N attempts of each payment fail, as a flaky gateway would. */
  paymentFailAttempts: number;
}

/**
 * Reads {@link ActivityConfig} from the environment: PAYMENTS_LEDGER, ERP_REGISTRY, ERP_DELAY_MS, PAYMENT_DELAY_MS,
 * PAYMENT_FAIL_ATTEMPTS. The files default to `.data/` in the current folder (the checkout, for the npm scripts),
 * never inside an installed package.
 */
export function activityConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ActivityConfig {
  const dataDir = path.resolve('.data');
  return {
    ledgerFile: path.resolve(env.PAYMENTS_LEDGER ?? path.join(dataDir, 'payments.jsonl')),
    erpRegistryFile: path.resolve(env.ERP_REGISTRY ?? path.join(dataDir, 'erp-invoices.jsonl')),
    erpDelayMs: nonNegativeInt(env.ERP_DELAY_MS, 'ERP_DELAY_MS'),
    paymentDelayMs: nonNegativeInt(env.PAYMENT_DELAY_MS, 'PAYMENT_DELAY_MS'),
    paymentFailAttempts: nonNegativeInt(env.PAYMENT_FAIL_ATTEMPTS, 'PAYMENT_FAIL_ATTEMPTS'),
  };
}

function nonNegativeInt(value: string | undefined, name: string): number {
  if (value === undefined || value === '') return 0;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`${name} must be a whole number of 0 or more, not "${value}"`);
  return parsed;
}

/** The invoice activities, bound to their files. */
export function createActivities(config: ActivityConfig) {
  const erp = new FixtureErp(config.erpRegistryFile);
  const ledger = new PaymentsLedger(config.ledgerFile);
  return {
    /** Checks the vendor and the invoice number against the ERP, registering the invoice for this task. */
    async validateInvoice(taskId: string, invoice: Invoice): Promise<ErpCheck> {
      if (config.erpDelayMs > 0) await heartbeatingSleep(config.erpDelayMs);
      return erp.validate(taskId, invoice);
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
  };
}

async function heartbeatingSleep(ms: number): Promise<void> {
  const context = Context.current();
  const until = Date.now() + ms;
  while (Date.now() < until) {
    context.heartbeat();
    await context.sleep(Math.min(1_000, until - Date.now()));
  }
}

/** The activity interface the workflow proxies. */
export type InvoiceActivities = ReturnType<typeof createActivities>;
