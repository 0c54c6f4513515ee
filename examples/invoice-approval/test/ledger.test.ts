import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, promises as fs, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RecordStore } from 'temporal-mcp-tasks';
import { FixtureErp } from '../src/activities/erp';
import { PaymentsLedger, type LedgerEntry, type PaymentRequest } from '../src/activities/payments';
import { sampleInvoice } from './invoices';

/** The example package's own folder. */
const EXAMPLE = path.resolve(__dirname, '..');
const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'ledger-test-'));
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function request(taskId: string, lineItemId: string): PaymentRequest {
  return { taskId, vendorId: 'V-100', invoiceNumber: 'INV-1', currency: 'EUR', lineItemId, amount: 10 };
}

/** Runs `script` (CommonJS, with `ledgerDir` and `PaymentsLedger` in scope) in a node process of its own. */
function ledgerProcess(ledgerDir: string, script: string) {
  const source = `
    const { PaymentsLedger } = require(${JSON.stringify(path.join(EXAMPLE, 'src/activities/payments.ts'))});
    const ledgerDir = ${JSON.stringify(ledgerDir)};
    ${script}`;
  return spawn(process.execPath, ['--import', 'tsx', '-e', source], { cwd: EXAMPLE, stdio: ['ignore', 'pipe', 'inherit'] });
}

/** The ids of the first `count` line items, LI-0 … */
const lineItems = (count: number) => Array.from({ length: count }, (_, i) => `LI-${i}`);

describe('PaymentsLedger', () => {
  test('pays a line item once: a second payment with the same key returns the first', async () => {
    const ledger = new PaymentsLedger(tmp());
    const first = await ledger.pay(request('t1', 'LI-1'));
    const again = await ledger.pay(request('t1', 'LI-1'));
    expect(first.created).toBe(true);
    expect(again).toEqual({ entry: first.entry, created: false });
    expect(await ledger.entries()).toEqual([first.entry]);
    expect(await ledger.find('t1', 'LI-1')).toEqual(first.entry);
    expect(await ledger.find('t1', 'LI-2')).toBeUndefined();
  });

  test('keeps each payment in a file of its own, named by the SHA-256 of its key, and nothing else once written', async () => {
    const dir = tmp();
    const { entry } = await new PaymentsLedger(dir).pay(request('t1', 'LI-1'));
    expect(readdirSync(dir)).toEqual([`${sha256('t1/LI-1')}.json`]);
    expect(JSON.parse(readFileSync(path.join(dir, `${sha256('t1/LI-1')}.json`), 'utf8'))).toEqual(entry);
    expect(entry).toMatchObject({
      key: 't1/LI-1',
      taskId: 't1',
      invoiceNumber: 'INV-1',
      lineItemId: 'LI-1',
      amount: 10,
      paymentId: expect.stringMatching(/^PAY-/),
    });
  });

  test('entries() lists every payment, oldest first (by paidAt; payments of one millisecond by key)', async () => {
    const ledger = new PaymentsLedger(tmp());
    const paid: LedgerEntry[] = [];
    for (const id of lineItems(30)) paid.push((await ledger.pay(request('t1', id))).entry);
    // paidAt has millisecond resolution: on a fast machine several payments share one, and the key orders them.
    const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const oldestFirst = [...paid].sort((a, b) => order(a.paidAt, b.paidAt) || order(a.key, b.key));
    expect(await ledger.entries()).toEqual(oldestFirst);
    expect(paid.map((entry) => entry.paidAt)).toEqual(paid.map((entry) => entry.paidAt).sort());
  });

  test('keeps keys unique under 50 concurrent payments of 5 line items in one process', async () => {
    const ledger = new PaymentsLedger(tmp());
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => ledger.pay(request('t1', `LI-${i % 5}`))));
    expect(results.filter((result) => result.created)).toHaveLength(5);
    const keys = (await ledger.entries()).map((e) => e.key).sort();
    expect(keys).toEqual(['t1/LI-0', 't1/LI-1', 't1/LI-2', 't1/LI-3', 't1/LI-4']);
  });

  test('two ledgers on one directory paying the same keys at once make one payment per key, which both return', async () => {
    const dir = tmp();
    const [a, b] = [new PaymentsLedger(dir), new PaymentsLedger(dir)];
    const ids = lineItems(20);
    const [fromA, fromB] = await Promise.all([
      Promise.all(ids.map((id) => a.pay(request('t', id)))),
      Promise.all(ids.map((id) => b.pay(request('t', id)))),
    ]);
    for (let i = 0; i < ids.length; i++) {
      expect(fromA[i].entry).toEqual(fromB[i].entry);
      expect(Number(fromA[i].created) + Number(fromB[i].created)).toBe(1);
    }
    expect(await a.entries()).toHaveLength(20);
  });

  test('four processes paying the same line items at once make one payment per key, and all see that payment', async () => {
    const dir = tmp();
    const script = `
      Promise.all(Array.from({ length: 12 }, (_, i) => new PaymentsLedger(ledgerDir).pay({ taskId: 't', vendorId: 'V', invoiceNumber: 'I', currency: 'EUR', lineItemId: 'LI-' + (i % 6), amount: 1 })))
        .then((results) => { process.stdout.write(JSON.stringify(results)); process.exit(0); }, (e) => { console.error(e); process.exit(1); });`;
    const outputs = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<{ entry: LedgerEntry; created: boolean }[]>((resolve, reject) => {
            const child = ledgerProcess(dir, script);
            let out = '';
            child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
            child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`ledger process exited with ${code}`))));
          }),
      ),
    );
    const entries = await new PaymentsLedger(dir).entries();
    expect(entries.map((e) => e.key).sort()).toEqual(lineItems(6).map((id) => `t/${id}`));
    const results = outputs.flat();
    expect(results.filter((result) => result.created)).toHaveLength(6);
    for (const { entry } of results) expect(entry).toEqual(entries.find((e) => e.key === entry.key));
  });

  test('a process killed at any point while paying leaves no key twice, no key blocked, and no torn record', async () => {
    const dir = tmp();
    // Pays LI-0, LI-1, … until it is killed, saying so after each payment it made.
    const script = `
      (async () => {
        const ledger = new PaymentsLedger(ledgerDir);
        for (let i = 0; ; i++) {
          const { created } = await ledger.pay({ taskId: 't', vendorId: 'V', invoiceNumber: 'I', currency: 'EUR', lineItemId: 'LI-' + i, amount: 1 });
          if (created) process.stdout.write('paid\\n');
        }
      })();`;
    // Each run is killed once it has made this many new payments: wherever it is in the next one by then.
    for (const killAfterPayments of [1, 10, 50]) {
      const child = ledgerProcess(dir, script);
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      let paid = 0;
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          paid += chunk.toString().split('\n').length - 1;
          if (paid >= killAfterPayments) resolve();
        });
        void exited.then(() => reject(new Error(`the paying process ended by itself after ${paid} payments`)));
      });
      child.kill('SIGKILL');
      // Killed mid-run: the script never ends by itself.
      expect(await exited).toBe('SIGKILL');
    }
    const ledger = new PaymentsLedger(dir);
    const before = await ledger.entries();
    expect(before.length).toBeGreaterThanOrEqual(1 + 10 + 50);
    // Every line item the runs may have reached, and more that none did.
    const ids = lineItems(Math.max(...before.map((entry) => Number(entry.lineItemId.slice('LI-'.length)))) + 100);
    const results = await Promise.all(ids.map((id) => ledger.pay(request('t', id))));
    for (const { entry, created } of results) {
      const earlier = before.find((e) => e.key === entry.key);
      // Paid before the kill: found as it was. Not paid: paid now, once.
      expect(created).toBe(earlier === undefined);
      if (earlier) expect(entry).toEqual(earlier);
    }
    const after = await ledger.entries();
    expect(after.map((e) => e.key).sort()).toEqual(ids.map((id) => `t/${id}`).sort());
    // Leftovers are temporary files only, never a record under a second name.
    const files = readdirSync(dir);
    expect(files.filter((name) => name.endsWith('.json'))).toHaveLength(ids.length);
    expect(files.filter((name) => !name.endsWith('.json')).every((name) => name.endsWith('.tmp'))).toBe(true);
  });

  test('a record left half-written by a crash (its temporary file) neither blocks nor duplicates the payment, and is swept when old', async () => {
    const dir = tmp();
    await fs.mkdir(dir, { recursive: true });
    const temp = path.join(dir, `${sha256('t1/LI-1')}.5b0e3b4c-0000-4000-8000-000000000000.tmp`);
    await fs.writeFile(temp, '{"key":"t1/LI-1","taskId":"t1","amou');
    const ledger = new PaymentsLedger(dir);
    expect(await ledger.entries()).toEqual([]);
    const first = await ledger.pay(request('t1', 'LI-1'));
    expect(first.created).toBe(true);
    expect(await ledger.pay(request('t1', 'LI-1'))).toEqual({ entry: first.entry, created: false });
    expect(await ledger.entries()).toEqual([first.entry]);

    // A store that starts later removes temporary files older than its limit.
    const old = new Date(Date.now() - 2 * 3_600_000);
    await fs.utimes(temp, old, old);
    await new RecordStore(dir).createOnce('other', () => ({ key: 'other' }));
    expect(readdirSync(dir)).not.toContain(path.basename(temp));
  });

  test('pays at once whatever lock files an earlier version left: a stale lock naming a live PID (ours, PID 1), a leftover .lock.break', async () => {
    const dir = tmp();
    for (const lock of [`${dir}.lock`, path.join(dir, '.lock'), path.join(dir, 'payments.lock')]) {
      await fs.mkdir(path.dirname(lock), { recursive: true });
      await fs.writeFile(lock, `${process.pid} 4b4f0c2e`);
      await fs.mkdir(`${lock}.break`);
    }
    await fs.writeFile(`${dir}.jsonl.lock`, '1 8d0f7d2a');
    const locks = [`${dir}.lock`, path.join(dir, '.lock'), path.join(dir, 'payments.lock'), `${dir}.jsonl.lock`];
    const before = await Promise.all(locks.map((lock) => fs.readFile(lock, 'utf8')));
    // A ledger that honoured these locks would wait for good (the live PID never lets go): the payment is made at all.
    const { created } = await new PaymentsLedger(dir).pay(request('t1', 'LI-1'));
    expect(created).toBe(true);
    // Neither waited for nor broken: every lock file is left as it was.
    expect(await Promise.all(locks.map((lock) => fs.readFile(lock, 'utf8')))).toEqual(before);
    for (const lock of [`${dir}.lock`, path.join(dir, '.lock'), path.join(dir, 'payments.lock')]) await fs.access(`${lock}.break`);
  });

  test('the ledger and the ERP registry hold no lock and look at no process: nothing in them names a PID or a lock file', () => {
    const dir = path.join(EXAMPLE, 'src/activities');
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts'))) {
      const source = readFileSync(path.join(dir, file), 'utf8');
      expect(source).not.toMatch(/process\.kill|process\.pid|\.lock\b|lockfile/i);
    }
  });

  test('imports a JSON-lines ledger of an earlier version once: its payments are found, not made again', async () => {
    const dir = path.join(tmp(), 'payments');
    const legacy = `${dir}.jsonl`;
    const old: LedgerEntry = { key: 't1/LI-1', ...request('t1', 'LI-1'), paymentId: 'PAY-old', paidAt: '2026-01-01T00:00:00.000Z' };
    await fs.writeFile(legacy, `${JSON.stringify(old)}\n{"key":"t1/LI-2","amou`);
    const ledger = new PaymentsLedger(dir);
    expect(await ledger.importJsonLines(legacy)).toBe(1);
    expect(await ledger.pay(request('t1', 'LI-1'))).toEqual({ entry: old, created: false });
    expect((await ledger.pay(request('t1', 'LI-2'))).created).toBe(true);
    expect(await ledger.importJsonLines(legacy)).toBeUndefined();
    await fs.access(`${legacy}.imported`);
  });
});

describe('FixtureErp', () => {
  test('validating registers nothing: two tasks with the same invoice number both pass until one registers it', async () => {
    const erp = new FixtureErp(tmp());
    const invoice = sampleInvoice();
    expect(await erp.validate('task-a', invoice)).toEqual({ ok: true, vendorName: 'Acme Office Supplies' });
    expect(await erp.validate('task-b', invoice)).toEqual({ ok: true, vendorName: 'Acme Office Supplies' });
    expect(await erp.holder(invoice.vendorId, invoice.invoiceNumber)).toBeUndefined();
  });

  test('registers a number to one task, idempotently; others are refused until it is released', async () => {
    const erp = new FixtureErp(tmp());
    const invoice = sampleInvoice();
    expect(await erp.register('task-a', invoice)).toMatchObject({ ok: true });
    expect(await erp.register('task-a', invoice)).toMatchObject({ ok: true });
    expect(await erp.validate('task-a', invoice)).toMatchObject({ ok: true });
    expect(await erp.validate('task-b', invoice)).toMatchObject({ ok: false, code: 'duplicate_invoice' });
    expect(await erp.register('task-b', invoice)).toMatchObject({ ok: false, code: 'duplicate_invoice' });
    expect(await erp.register('task-b', { ...invoice, vendorId: 'V-200' })).toMatchObject({ ok: true });

    expect(await erp.release('task-b', invoice)).toBe(false);
    expect(await erp.holder(invoice.vendorId, invoice.invoiceNumber)).toBe('task-a');
    expect(await erp.release('task-a', invoice)).toBe(true);
    expect(await erp.release('task-a', invoice)).toBe(false);
    expect(await erp.holder(invoice.vendorId, invoice.invoiceNumber)).toBeUndefined();
    expect(await erp.register('task-b', invoice)).toMatchObject({ ok: true });
    // A late attempt of task-a's registration cannot take the number back, nor can task-a's release end task-b's.
    expect(await erp.register('task-a', invoice)).toMatchObject({ ok: false, code: 'duplicate_invoice' });
    expect(await erp.release('task-a', invoice)).toBe(false);
    expect(await erp.holder(invoice.vendorId, invoice.invoiceNumber)).toBe('task-b');
  });

  test('two registries on one directory registering one number for different tasks at once: exactly one task gets it', async () => {
    const dir = tmp();
    const invoice = sampleInvoice();
    const tasks = Array.from({ length: 8 }, (_, i) => `task-${i}`);
    const results = await Promise.all(tasks.map((taskId) => new FixtureErp(dir).register(taskId, invoice)));
    expect(results.filter((result) => result.ok)).toHaveLength(1);
    const winner = tasks[results.findIndex((result) => result.ok)];
    expect(await new FixtureErp(dir).holder(invoice.vendorId, invoice.invoiceNumber)).toBe(winner);
  });

  test('keeps each registration and release as a record file of its own, written whole', async () => {
    const dir = tmp();
    const erp = new FixtureErp(dir);
    const invoice = sampleInvoice();
    await erp.register('task-a', invoice);
    await erp.release('task-a', invoice);
    await erp.register('task-b', invoice);
    const records = readdirSync(dir).map((name) => JSON.parse(readFileSync(path.join(dir, name), 'utf8')));
    expect(records.map((record) => `${record.kind} ${record.generation} ${record.taskId}`).sort()).toEqual([
      'registration 1 task-a',
      'registration 2 task-b',
      'release 1 task-a',
    ]);
  });

  test.each([
    ['V-404', 'unknown_vendor'],
    ['V-666', 'vendor_on_hold'],
  ])('refuses vendor %s with %s', async (vendorId, code) => {
    const erp = new FixtureErp(tmp());
    expect(await erp.validate('t', sampleInvoice({ vendorId }))).toMatchObject({ ok: false, code });
    expect(await erp.register('t', sampleInvoice({ vendorId }))).toMatchObject({ ok: false, code });
  });

  test('refuses an invoice number the ERP booked before', async () => {
    const erp = new FixtureErp(tmp());
    expect(await erp.validate('t', sampleInvoice({ invoiceNumber: 'INV-0001' }))).toMatchObject({ ok: false, code: 'duplicate_invoice' });
  });
});
