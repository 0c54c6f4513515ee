import type { Invoice } from '../invoice';
import { RecordStore } from 'temporal-mcp-tasks';
import { importJsonLines } from './json-lines';

/** A vendor of the fixture ERP. */
export interface Vendor {
  vendorId: string;
  name: string;
  status: 'active' | 'on_hold';
}

/** The fixture ERP's vendor master data. */
const VENDORS: readonly Vendor[] = [
  { vendorId: 'V-100', name: 'Acme Office Supplies', status: 'active' },
  { vendorId: 'V-200', name: 'Northwind Logistics', status: 'active' },
  { vendorId: 'V-666', name: 'Globex Consulting', status: 'on_hold' },
];

/** Invoices the fixture ERP booked before this bridge ran. */
const BOOKED_INVOICES: readonly { vendorId: string; invoiceNumber: string }[] = [{ vendorId: 'V-100', invoiceNumber: 'INV-0001' }];

/**
 * The registration of an invoice number to the task that pays it. Registrations of one vendor and invoice number are
 * numbered from 1; a new one is made only once the one before is released.
 */
export interface InvoiceRegistration {
  key: string;
  kind: 'registration';
  vendorId: string;
  invoiceNumber: string;
  generation: number;
  taskId: string;
  registeredAt: string;
}

/** The end of a registration: its task was cancelled or rejected before paying anything. */
export interface InvoiceRelease {
  key: string;
  kind: 'release';
  vendorId: string;
  invoiceNumber: string;
  generation: number;
  taskId: string;
  releasedAt: string;
}

type RegistryRecord = InvoiceRegistration | InvoiceRelease;

/** Why the ERP refused an invoice. */
export const ERP_REFUSALS = ['unknown_vendor', 'vendor_on_hold', 'duplicate_invoice'] as const;

/** The ERP's verdict on an invoice. */
export type ErpCheck = { ok: true; vendorName: string } | { ok: false; code: (typeof ERP_REFUSALS)[number]; reason: string };

/** The registrations of one invoice number, oldest first, each with whether it was released. */
type Registrations = { registration: InvoiceRegistration; released: boolean }[];

/**
 * The fixture ERP: checks the vendor and the invoice number, and keeps a registry of the invoice numbers approved for
 * payment, so that a second invoice with the same number for the same vendor is refused while the first one holds it.
 *
 * Checking registers nothing. A task registers the number when it is approved for payment (idempotently: a retried
 * registration passes again) and releases it when it ends without paying anything. The registry is a
 * {@link RecordStore}: every registration and every release is an immutable record of its own, created atomically, so
 * it needs no lock and survives any crash; a release names the registration it ends, so it can never end another
 * task's.
 */
export class FixtureErp {
  private readonly registry: RecordStore<RegistryRecord>;

  constructor(registryDir: string) {
    this.registry = new RecordStore(registryDir);
  }

  /** Checks `invoice` for `taskId` without registering it: the vendor, and that no other task holds the number. */
  async validate(taskId: string, invoice: Invoice): Promise<ErpCheck> {
    const check = checkVendorAndBooking(invoice);
    if (!check.ok) return check;
    const holder = current(await this.registrations(invoice));
    if (holder && holder.taskId !== taskId) return duplicate(invoice);
    return check;
  }

  /**
   * Checks `invoice` again and registers its number to `taskId`, unless another task holds it (`duplicate_invoice`).
   * Registering again for the same task passes; a task whose registration was released cannot register again.
   */
  async register(taskId: string, invoice: Invoice): Promise<ErpCheck> {
    const check = checkVendorAndBooking(invoice);
    if (!check.ok) return check;
    for (;;) {
      const registrations = await this.registrations(invoice);
      const holder = current(registrations);
      if (holder) return holder.taskId === taskId ? check : duplicate(invoice);
      if (registrations.some(({ registration }) => registration.taskId === taskId)) {
        // Only a late attempt of a registration the task has since released gets here: it must not take the number again.
        return duplicate(invoice);
      }
      const generation = registrations.length + 1;
      const key = registrationKey(invoice, generation);
      const { record } = await this.registry.createOnce(key, () => ({
        key,
        kind: 'registration',
        vendorId: invoice.vendorId,
        invoiceNumber: invoice.invoiceNumber,
        generation,
        taskId,
        registeredAt: new Date().toISOString(),
      }));
      if (record.taskId === taskId) return check;
      // Another task took this generation first; look again (it holds the number now).
    }
  }

  /** Releases the number if `taskId` holds it, so it may be submitted again. Returns whether it did; idempotent. */
  async release(taskId: string, invoice: Pick<Invoice, 'vendorId' | 'invoiceNumber'>): Promise<boolean> {
    const holder = current(await this.registrations(invoice));
    if (!holder || holder.taskId !== taskId) return false;
    const key = releaseKey(invoice, holder.generation);
    await this.registry.createOnce(key, () => ({
      key,
      kind: 'release',
      vendorId: holder.vendorId,
      invoiceNumber: holder.invoiceNumber,
      generation: holder.generation,
      taskId,
      releasedAt: new Date().toISOString(),
    }));
    return true;
  }

  /** The task that holds the invoice number now, if any. */
  async holder(vendorId: string, invoiceNumber: string): Promise<string | undefined> {
    return current(await this.registrations({ vendorId, invoiceNumber }))?.taskId;
  }

  /**
   * Copies the registrations of a JSON-lines registry written by an earlier version, each as the first registration
   * of its number, then renames the file to `<file>.imported`. Returns how many it held, or undefined when there is no
   * such file.
   */
  importJsonLines(file: string): Promise<number | undefined> {
    return importJsonLines<Omit<InvoiceRegistration, 'kind' | 'generation'>>(file, ({ vendorId, invoiceNumber, taskId, registeredAt }) => {
      const key = registrationKey({ vendorId, invoiceNumber }, 1);
      return this.registry.createOnce(key, () => ({
        key,
        kind: 'registration',
        vendorId,
        invoiceNumber,
        generation: 1,
        taskId,
        registeredAt,
      }));
    });
  }

  private async registrations(invoice: Pick<Invoice, 'vendorId' | 'invoiceNumber'>): Promise<Registrations> {
    const found: Registrations = [];
    for (let generation = 1; ; generation++) {
      const registration = await this.registry.get(registrationKey(invoice, generation));
      if (registration?.kind !== 'registration') return found;
      const released = (await this.registry.get(releaseKey(invoice, generation))) !== undefined;
      found.push({ registration, released });
    }
  }
}

function checkVendorAndBooking(invoice: Invoice): ErpCheck {
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
  if (BOOKED_INVOICES.some((b) => b.vendorId === vendor.vendorId && b.invoiceNumber === invoice.invoiceNumber)) return duplicate(invoice);
  return { ok: true, vendorName: vendor.name };
}

function duplicate(invoice: Pick<Invoice, 'vendorId' | 'invoiceNumber'>): ErpCheck {
  return {
    ok: false,
    code: 'duplicate_invoice',
    reason: `Invoice ${invoice.invoiceNumber} from vendor ${invoice.vendorId} was already processed; an invoice number may be paid once per vendor.`,
  };
}

/** The registration in force: the newest one, unless it was released. */
function current(registrations: Registrations): InvoiceRegistration | undefined {
  const newest = registrations[registrations.length - 1];
  return newest && !newest.released ? newest.registration : undefined;
}

function registrationKey(invoice: Pick<Invoice, 'vendorId' | 'invoiceNumber'>, generation: number): string {
  return `registration/${invoice.vendorId}/${invoice.invoiceNumber}/${generation}`;
}

function releaseKey(invoice: Pick<Invoice, 'vendorId' | 'invoiceNumber'>, generation: number): string {
  return `release/${invoice.vendorId}/${invoice.invoiceNumber}/${generation}`;
}
