/**
 * `temporal-mcp-tasks approvals verify` as an auditor runs it: a task's records from the store, an exported receipt
 * offline, a tampered or moved record, and what the command says and exits with on bad usage.
 */
import { spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileDecisionStore } from '../../src/records/file-store';
import type { ApprovalReceipt } from '../../src/records/receipt';
import { appendChained } from '../../src/records/store';
import { ROOT } from '../../scripts/lib/processes';
import { bodyOf, testSigner, type Step } from '../helpers/decision-records';

const { signer, privateKeyPem } = testSigner();
const FIRST = 'process-invoice-1a2b3c4d-0000-4000-8000-000000000001';
const SECOND = 'process-invoice-1a2b3c4d-0000-4000-8000-000000000002';
const REJECTED = 'process-invoice-1a2b3c4d-0000-4000-8000-000000000003';
const OPEN = 'process-invoice-1a2b3c4d-0000-4000-8000-000000000004';

let dir: string;
let storeDir: string;
let publicKey: string;

/** The command's run: exit code and output. */
function approvals(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'approvals', ...args], {
      cwd: ROOT,
      // Nothing of the machine's own store or keys: only what a test gives.
      env: { ...process.env, MCP_DECISION_STORE: path.join(dir, 'no-store-here'), XDG_CONFIG_HOME: path.join(dir, 'no-config'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

async function record(store: FileDecisionStore, taskId: string, steps: Step[]): Promise<void> {
  for (const step of steps) await appendChained(store, taskId, (seq, prev) => signer.sign(bodyOf(taskId, seq, prev, step)));
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'approvals-cli-'));
  storeDir = path.join(dir, 'decisions');
  publicKey = path.join(dir, 'decision.pub.pem');
  writeFileSync(publicKey, signer.publicKeyPem);
  const store = new FileDecisionStore(storeDir);
  const twoApprovals: Step[] = [
    { decision: 'approve', by: 'carol', comment: 'ok\u001b[31m red' },
    {
      decision: 'approve',
      by: { principal: 'oauth:dave', person: 'dave', auth: 'oauth', roles: ['ap-approver'], actingAs: 'ap-approver' },
    },
  ];
  // The bridge closes the question on the answer that closed it.
  const closed: Step = { decision: 'close', outcome: 'accepted', required: 2, by: 'dave', via: 'closed by this answer' };
  await record(store, FIRST, [...twoApprovals, closed]);
  await record(store, SECOND, [...twoApprovals, closed]);
  await record(store, REJECTED, [{ decision: 'reject', by: 'carol', comment: 'not ours' }]);
  // Approved by both, but the records end before the close: open, or cut.
  await record(store, OPEN, twoApprovals);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('approvals verify --export never writes through a symbolic link planted at the path: exit 2, the link target untouched', async () => {
  const target = path.join(dir, 'precious.txt');
  writeFileSync(target, 'keep me\n');
  const link = path.join(dir, 'receipt-link.json');
  symlinkSync(target, link);
  const run = await approvals(['verify', FIRST, '--store', storeDir, '--public-key', publicKey, '--export', link]);
  expect(run).toMatchObject({ code: 2, err: expect.stringContaining(`--export ${link} is a symbolic link`) });
  expect(readFileSync(target, 'utf8')).toBe('keep me\n');
  expect(lstatSync(link).isSymbolicLink()).toBe(true);
  expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
});

test('approvals verify: reports the subject, each decision and the verdict, exports a receipt, exits 0', async () => {
  const receipt = path.join(dir, 'first.json');
  const run = await approvals(['verify', FIRST, '--store', storeDir, '--public-key', publicKey, '--export', receipt]);
  expect(run).toMatchObject({ code: 0, err: '' });
  expect(run.out).toContain(`Task ${FIRST}: 3 decision records in the decision records directory ${storeDir}`);
  expect(run.out).toContain(
    [
      '  Subject shown:',
      '    kind: invoice',
      '    vendorId: V-100',
      '    vendorName: ACME Office Supplies',
      '    invoiceNumber: INV-2026-0042',
      '    currency: EUR',
      '    total: EUR 1,450.00',
      '    lines (1):',
      '      - lineItemId: LI-1, description: "Chairs, 10 units", amount: EUR 1,450.00',
      '    erp:',
      '      ok: true',
    ].join('\n'),
  );
  expect(run.out).toMatch(
    /1\. approve by carol \(principal carol, role ap-approver\) at 2026-11-26T10:00:01\.000Z via approvals_answer; comment "ok\\x1b\[31m red"; signed/,
  );
  expect(run.out).toContain('2. approve by dave (principal oauth:dave, role ap-approver, asked as ap-approver)');
  expect(run.out).toMatch(/3\. close by dave .* via closed by this answer; closed as accepted, 2 approval\(s\) required; signed/);
  expect(run.out).toContain(
    'Verdict: approved by 2 distinct people: carol (principal carol), dave (principal oauth:dave), of 2 required; closed at',
  );
  expect(run.out).toContain('VALID:');
  expect(run.out).toContain(`Receipt written to ${receipt}.`);
  // Control characters from a record never reach the terminal as they are.
  expect(run.out).not.toContain('\u001b');
  const written = JSON.parse(readFileSync(receipt, 'utf8')) as ApprovalReceipt;
  expect(written).toMatchObject({ format: 'temporal-mcp-tasks/approval-receipt', v: 1, taskId: FIRST, keyIds: [signer.keyId] });
  expect(written.records).toHaveLength(3);
});

test('approvals verify --receipt: checks a receipt offline; one byte changed, or a record moved in, exits 1', async () => {
  const [first, second] = [path.join(dir, 'r1.json'), path.join(dir, 'r2.json')];
  const exported = await Promise.all([
    approvals(['verify', FIRST, '--public-key', publicKey, '--export', first], { MCP_DECISION_STORE: storeDir }),
    approvals(['verify', SECOND, '--public-key', publicKey, '--export', second], { MCP_DECISION_STORE: storeDir }),
  ]);
  expect(exported.map((run) => run.code)).toEqual([0, 0]);

  const text = readFileSync(first, 'utf8');
  const at = text.indexOf('1450');
  const tampered = path.join(dir, 'tampered.json');
  writeFileSync(tampered, `${text.slice(0, at)}1460${text.slice(at + 4)}`);
  const one = JSON.parse(text) as ApprovalReceipt;
  one.records[0] = (JSON.parse(readFileSync(second, 'utf8')) as ApprovalReceipt).records[0];
  const moved = path.join(dir, 'moved.json');
  writeFileSync(moved, JSON.stringify(one));

  const [good, changed, movedIn, json] = await Promise.all([
    approvals(['verify', '--receipt', first, '--public-key', publicKey]),
    approvals(['verify', '--receipt', tampered, '--public-key', publicKey]),
    approvals(['verify', '--receipt', moved, '--public-key', publicKey]),
    approvals(['verify', '--receipt', first, '--json'], { MCP_DECISION_PUBLIC_KEY: publicKey }),
  ]);
  // Exported without the bridge's key: the records check out, and approval is not established by an unsealed receipt.
  expect(good).toMatchObject({ code: 3, out: expect.stringContaining('VALID:') });
  expect(good.out).toContain('Not sealed');
  expect(good.out).toContain(`decision records in the receipt ${first}`);
  expect(changed).toMatchObject({
    code: 1,
    out: expect.stringContaining('INVALID: record 1 was altered: its content does not match its digest'),
  });
  expect(movedIn).toMatchObject({
    code: 1,
    out: expect.stringMatching(/INVALID: record 1 belongs to task .*000000000002, not to .*000000000001/),
  });
  expect(json.code).toBe(3);
  expect(JSON.parse(json.out)).toMatchObject({
    ok: true,
    sealed: false,
    established: false,
    taskId: FIRST,
    checkedWith: [signer.keyId],
    questions: [{ key: 'approval', standing: 'approved', approvers: [{ person: 'carol' }, { person: 'dave' }] }],
  });
});

test('approvals verify --export seals the receipt with the bridge key where it is: a record cut from its end makes it INVALID', async () => {
  const signingKey = path.join(dir, 'decision.pem');
  writeFileSync(signingKey, privateKeyPem, { mode: 0o600 });
  const sealed = path.join(dir, 'sealed.json');
  const exported = await approvals(['verify', FIRST, '--public-key', publicKey, '--export', sealed], {
    MCP_DECISION_STORE: storeDir,
    MCP_DECISION_SIGNING_KEY: signingKey,
  });
  expect(exported.code).toBe(0);
  const receipt = JSON.parse(readFileSync(sealed, 'utf8')) as ApprovalReceipt;
  expect(receipt.seal).toMatchObject({ records: 3, head: receipt.records[2].digest, keyId: signer.keyId });
  const whole = await approvals(['verify', '--receipt', sealed, '--public-key', publicKey]);
  expect(whole).toMatchObject({ code: 0, out: expect.stringContaining('Sealed: the receipt holds the 3 record(s) it was exported with') });

  // The close cut from the end: the seal no longer matches.
  const cut = path.join(dir, 'sealed-cut.json');
  writeFileSync(cut, JSON.stringify({ ...receipt, records: receipt.records.slice(0, 2) }));
  const cutRun = await approvals(['verify', '--receipt', cut, '--public-key', publicKey]);
  expect(cutRun.code).toBe(1);
  expect(cutRun.out).toMatch(
    /INVALID: the receipt was sealed with 3 record\(s\) ending at sha256:\S+, and holds 2 ending at sha256:\S+: records were cut from it or added to it/,
  );
  // The seal's count changed to match: its signature fails.
  const recounted = path.join(dir, 'sealed-recounted.json');
  writeFileSync(
    recounted,
    JSON.stringify({
      ...receipt,
      records: receipt.records.slice(0, 2),
      seal: { ...receipt.seal, records: 2, head: receipt.records[1].digest },
    }),
  );
  expect(await approvals(['verify', '--receipt', recounted, '--public-key', publicKey])).toMatchObject({
    code: 1,
    out: expect.stringContaining(`INVALID: the receipt's seal is not valid under key ${signer.keyId}`),
  });
  // Without its seal, the same cut reads as open (exit 3), and the report says it is not sealed.
  const unsealed = path.join(dir, 'unsealed-cut.json');
  const { seal: _seal, ...bare } = receipt;
  writeFileSync(unsealed, JSON.stringify({ ...bare, records: receipt.records.slice(0, 2) }));
  const open = await approvals(['verify', '--receipt', unsealed, '--public-key', publicKey]);
  expect(open.code).toBe(3);
  expect(open.out).toContain("Not sealed (exported without the bridge's key)");
  // Cut after its close, the question reads approved on its records: unsealed, that does not establish it (a reset may
  // have reopened the question and a rejection closed it after those records), so it exits 3 all the same.
  const afterClose = path.join(dir, 'unsealed-after-close.json');
  writeFileSync(afterClose, JSON.stringify(bare));
  const read = await approvals(['verify', '--receipt', afterClose, '--public-key', publicKey, '--json']);
  expect(read.code).toBe(3);
  expect(JSON.parse(read.out)).toMatchObject({ ok: true, sealed: false, established: false, questions: [{ standing: 'approved' }] });
});

test('approvals verify: a rejection or records without their close exit 3, another key fails the check, a task without records exits 1', async () => {
  const otherKey = path.join(dir, 'other.pub.pem');
  writeFileSync(otherKey, testSigner().signer.publicKeyPem);
  const [rejected, open, wrongKey, unknown] = await Promise.all([
    approvals(['verify', REJECTED, '--store', storeDir, '--public-key', publicKey]),
    approvals(['verify', OPEN, '--store', storeDir, '--public-key', publicKey]),
    approvals(['verify', FIRST, '--store', storeDir, '--public-key', otherKey]),
    approvals(['verify', 'process-invoice-nothing-here', '--store', storeDir, '--public-key', publicKey]),
  ]);
  expect(rejected.code).toBe(3);
  expect(rejected.out).toMatch(/Verdict: rejected by carol \(principal carol\) at .*: nothing may be done on it/);
  expect(rejected.out).toContain('VALID:');
  expect(open.code).toBe(3);
  expect(open.out).toMatch(
    /Verdict: not approved: 2 approvals on record \(2 distinct people: .*\) but no close record: the question is still open, or these records end before it closed \(cut\)/,
  );
  expect(wrongKey).toMatchObject({
    code: 1,
    out: expect.stringMatching(/INVALID: record 1 is signed by key \S+, which is not among the public keys given/),
  });
  expect(unknown).toMatchObject({
    code: 1,
    out: expect.stringContaining('INVALID: there are no decision records of task process-invoice-nothing-here'),
  });
});

test('approvals: --help at every level exits 0; bad usage exits 2 saying what to do', async () => {
  const missingKey = path.join(dir, 'missing.pem');
  const runs = await Promise.all([
    approvals(['--help']),
    approvals(['verify', '--help']),
    approvals([]),
    approvals(['verify']),
    approvals(['verify', FIRST, '--bogus']),
    approvals(['verify', FIRST, '--receipt', path.join(dir, 'r1.json')]),
    approvals(['verify', FIRST, '--store', storeDir, '--public-key', missingKey]),
    approvals(['verify', FIRST, '--store', storeDir]),
    approvals(['verify', '--receipt', path.join(dir, 'no-such-receipt.json'), '--public-key', publicKey]),
    approvals(['audit']),
  ]);
  const [help, verifyHelp, bare, noTask, bogus, both, noKeyFile, noDefaultKey, noReceipt, unknownCommand] = runs;
  expect(help).toMatchObject({ code: 0, out: expect.stringContaining('Usage: temporal-mcp-tasks approvals <command>') });
  expect(verifyHelp).toMatchObject({ code: 0, out: expect.stringContaining('--receipt FILE') });
  expect(bare).toMatchObject({ code: 2, out: '', err: expect.stringContaining('Usage: temporal-mcp-tasks approvals') });
  expect(noTask).toMatchObject({
    code: 2,
    err: 'approvals: give the task id to verify, or --receipt FILE; see temporal-mcp-tasks approvals verify --help\n',
  });
  expect(bogus).toMatchObject({
    code: 2,
    err: expect.stringMatching(/Unknown option '--bogus'.*see temporal-mcp-tasks approvals verify --help/),
  });
  expect(both).toMatchObject({ code: 2, err: expect.stringContaining('give a task id or --receipt FILE, not both') });
  expect(noKeyFile).toMatchObject({ code: 2, err: expect.stringContaining(`cannot read the decision public key ${missingKey}`) });
  expect(noDefaultKey).toMatchObject({
    code: 2,
    err: expect.stringMatching(/set MCP_DECISION_PUBLIC_KEY .* or start the server once .*; or give --public-key FILE\n$/),
  });
  expect(noReceipt).toMatchObject({ code: 2, err: expect.stringContaining('cannot read the receipt') });
  expect(unknownCommand).toMatchObject({ code: 2, err: expect.stringContaining('unknown command "audit"') });
  for (const run of runs.slice(2)) expect(run.out).toBe('');
});

test('temporal-mcp-tasks --help names the approvals command', async () => {
  const run = await new Promise<string>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--help'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.once('close', () => resolve(out));
  });
  expect(run).toMatch(/\n {2}approvals {4}verify the signed decision records/);
});
