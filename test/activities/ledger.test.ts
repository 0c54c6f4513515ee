import { execFile } from 'node:child_process';
import { mkdtempSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { FixtureErp } from '../../src/activities/erp';
import { JsonlStore } from '../../src/activities/jsonl-store';
import { PaymentsLedger, type PaymentRequest } from '../../src/activities/payments';
import { sampleInvoice } from '../helpers/temporal';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'ledger-test-'));

function request(taskId: string, lineItemId: string): PaymentRequest {
  return { taskId, vendorId: 'V-100', invoiceNumber: 'INV-1', currency: 'EUR', lineItemId, amount: 10 };
}

describe('PaymentsLedger', () => {
  test('pays a line item once: a second payment with the same key returns the first', async () => {
    const ledger = new PaymentsLedger(path.join(tmp(), 'payments.jsonl'));
    const first = await ledger.pay(request('t1', 'LI-1'));
    const again = await ledger.pay(request('t1', 'LI-1'));
    expect(first.created).toBe(true);
    expect(again).toEqual({ entry: first.entry, created: false });
    expect(await ledger.entries()).toEqual([first.entry]);
  });

  test('writes one JSON object per line with task id, invoice, line item, amount, payment id and key', async () => {
    const file = path.join(tmp(), 'payments.jsonl');
    await new PaymentsLedger(file).pay(request('t1', 'LI-1'));
    const [line] = (await fs.readFile(file, 'utf8')).trim().split('\n');
    expect(JSON.parse(line)).toMatchObject({
      key: 't1/LI-1',
      taskId: 't1',
      invoiceNumber: 'INV-1',
      lineItemId: 'LI-1',
      amount: 10,
      paymentId: expect.stringMatching(/^PAY-/),
    });
  });

  test('keeps keys unique under 50 concurrent payments of 5 line items in one process', async () => {
    const ledger = new PaymentsLedger(path.join(tmp(), 'payments.jsonl'));
    await Promise.all(Array.from({ length: 50 }, (_, i) => ledger.pay(request('t1', `LI-${i % 5}`))));
    const keys = (await ledger.entries()).map((e) => e.key).sort();
    expect(keys).toEqual(['t1/LI-0', 't1/LI-1', 't1/LI-2', 't1/LI-3', 't1/LI-4']);
  });

  test('keeps keys unique across 4 processes paying the same line items at once', async () => {
    const file = path.join(tmp(), 'payments.jsonl');
    const script = `
      const { PaymentsLedger } = require(${JSON.stringify(path.resolve(__dirname, '../../src/activities/payments.ts'))});
      const ledger = new PaymentsLedger(${JSON.stringify(file)});
      Promise.all(Array.from({ length: 20 }, (_, i) => ledger.pay({ taskId: 't', vendorId: 'V', invoiceNumber: 'I', currency: 'EUR', lineItemId: 'LI-' + (i % 4), amount: 1 })))
        .then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });`;
    await Promise.all(
      Array.from({ length: 4 }, () =>
        promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', script], { cwd: path.resolve(__dirname, '../..') }),
      ),
    );
    const entries = await new PaymentsLedger(file).entries();
    expect(entries.map((e) => e.key).sort()).toEqual(['t/LI-0', 't/LI-1', 't/LI-2', 't/LI-3']);
  });

  test('cuts off a line torn by a crash before appending, and loses no complete line', async () => {
    const file = path.join(tmp(), 'payments.jsonl');
    const ledger = new PaymentsLedger(file);
    const first = await ledger.pay(request('t1', 'LI-1'));
    await fs.appendFile(file, '{"key":"t1/LI-2","taskId":"t1","amou');
    expect(await ledger.entries()).toEqual([first.entry]);
    const second = await ledger.pay(request('t1', 'LI-2'));
    const lines = (await fs.readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([first.entry, second.entry]);
  });

  test('breaks a lock left behind by a dead process', async () => {
    const file = path.join(tmp(), 'payments.jsonl');
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', 'console.log(process.pid)']);
    await fs.writeFile(`${file}.lock`, `${stdout.trim()} stale`);
    const { created } = await new PaymentsLedger(file).pay(request('t1', 'LI-1'));
    expect(created).toBe(true);
  });

  test('waits for a lock held by a live process, then gives up with a clear error', async () => {
    const file = path.join(tmp(), 'payments.jsonl');
    await fs.writeFile(`${file}.lock`, `${process.pid} held`);
    const store = new JsonlStore<{ key: string }>(file, 200);
    await expect(store.recordOnce('k', () => ({ key: 'k' }))).rejects.toThrow(/could not lock .* another process holds it/);
  });
});

describe('FixtureErp', () => {
  test('accepts an active vendor and registers the invoice to the task, idempotently', async () => {
    const erp = new FixtureErp(path.join(tmp(), 'erp.jsonl'));
    const invoice = sampleInvoice();
    expect(await erp.validate('task-a', invoice)).toEqual({ ok: true, vendorName: 'Acme Office Supplies' });
    expect(await erp.validate('task-a', invoice)).toMatchObject({ ok: true });
    expect(await erp.validate('task-b', invoice)).toMatchObject({ ok: false, code: 'duplicate_invoice' });
    expect(await erp.validate('task-b', { ...invoice, vendorId: 'V-200' })).toMatchObject({ ok: true });
  });

  test.each([
    ['V-404', 'unknown_vendor'],
    ['V-666', 'vendor_on_hold'],
  ])('refuses vendor %s with %s', async (vendorId, code) => {
    const erp = new FixtureErp(path.join(tmp(), 'erp.jsonl'));
    expect(await erp.validate('t', sampleInvoice({ vendorId }))).toMatchObject({ ok: false, code });
  });
});
