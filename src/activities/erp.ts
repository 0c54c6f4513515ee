import type { Invoice } from '../shared/invoice';
import { JsonlStore } from './jsonl-store';

/** A vendor of the fixture ERP. */
export interface Vendor {
  vendorId: string;
  name: string;
  status: 'active' | 'on_hold';
}

/** The fixture ERP's vendor master data. */
export const VENDORS: readonly Vendor[] = [
  { vendorId: 'V-100', name: 'Acme Office Supplies', status: 'active' },
  { vendorId: 'V-200', name: 'Northwind Logistics', status: 'active' },
  { vendorId: 'V-666', name: 'Globex Consulting', status: 'on_hold' },
];

/** Invoices the fixture ERP booked before this bridge ran. */
export const BOOKED_INVOICES: readonly { vendorId: string; invoiceNumber: string }[] = [{ vendorId: 'V-100', invoiceNumber: 'INV-0001' }];

/** An invoice registered by a task; one registration per vendor and invoice number. */
export interface InvoiceRegistration {
  key: string;
  vendorId: string;
  invoiceNumber: string;
  taskId: string;
  registeredAt: string;
}

/** Why the ERP refused an invoice. */
export const ERP_REFUSALS = ['unknown_vendor', 'vendor_on_hold', 'duplicate_invoice'] as const;

/** The ERP's verdict on an invoice. */
export type ErpCheck = { ok: true; vendorName: string } | { ok: false; code: (typeof ERP_REFUSALS)[number]; reason: string };

/**
 * The fixture ERP: checks the vendor and registers the invoice number, so that a second invoice with the same
 * number for the same vendor is refused. Registration is idempotent per task, so a retried check passes again.
 */
export class FixtureErp {
  private readonly registry: JsonlStore<InvoiceRegistration>;

  constructor(registryFile: string) {
    this.registry = new JsonlStore(registryFile);
  }

  /** Checks and registers `invoice` for `taskId`. */
  async validate(taskId: string, invoice: Invoice): Promise<ErpCheck> {
    const vendor = VENDORS.find((v) => v.vendorId === invoice.vendorId);
    if (!vendor) {
      return {
        ok: false,
        code: 'unknown_vendor',
        reason: `Vendor ${invoice.vendorId} does not exist in the ERP; check the vendor id (known: ${VENDORS.map((v) => v.vendorId).join(', ')}).`,
      };
    }
    if (vendor.status === 'on_hold') {
      return {
        ok: false,
        code: 'vendor_on_hold',
        reason: `Vendor ${vendor.vendorId} (${vendor.name}) is on hold in the ERP; payments to it are blocked until procurement releases the hold.`,
      };
    }
    const duplicate = `Invoice ${invoice.invoiceNumber} from vendor ${vendor.vendorId} was already processed; an invoice number may be paid once per vendor.`;
    if (BOOKED_INVOICES.some((b) => b.vendorId === vendor.vendorId && b.invoiceNumber === invoice.invoiceNumber)) {
      return { ok: false, code: 'duplicate_invoice', reason: duplicate };
    }
    const key = `${vendor.vendorId}/${invoice.invoiceNumber}`;
    const { record } = await this.registry.recordOnce(key, () => ({
      key,
      vendorId: vendor.vendorId,
      invoiceNumber: invoice.invoiceNumber,
      taskId,
      registeredAt: new Date().toISOString(),
    }));
    if (record.taskId !== taskId) return { ok: false, code: 'duplicate_invoice', reason: duplicate };
    return { ok: true, vendorName: vendor.name };
  }
}
