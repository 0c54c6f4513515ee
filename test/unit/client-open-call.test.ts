/**
 * How `call` finds an earlier call to adopt in the client's local store: same server, tool and arguments (in any key
 * order), not ended, not given up, not gone. No server, no Temporal.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { argumentsDigest, canonicalJson } from '../../src/util/arguments-digest';
import { LocalTaskStore } from '../../src/client/store';

const SERVER = 'http://127.0.0.1:3300/mcp';
const TOOL = 'process_invoice';
const INVOICE = { vendorId: 'V-100', invoiceNumber: 'INV-1', lineItems: [{ lineItemId: 'LI-1', amount: 10 }] };
const at = (minute: number) => `2026-01-01T00:${String(minute).padStart(2, '0')}:00.000Z`;

function store(): LocalTaskStore {
  return new LocalTaskStore(mkdtempSync(path.join(os.tmpdir(), 'open-call-')));
}

function intent(s: LocalTaskStore, key: string, minute: number, args: Record<string, unknown> = INVOICE, server = SERVER, tool = TOOL) {
  s.append({ type: 'intent', key, server, tool, arguments: args, at: at(minute) });
}

function created(s: LocalTaskStore, key: string, taskId: string, minute: number) {
  s.append({ type: 'created', taskId, server: SERVER, tool: TOOL, createdAt: at(minute), key, at: at(minute) });
}

describe('argumentsDigest', () => {
  test('argumentsDigest: equal for the same arguments in another key order, different for other values', () => {
    const reordered = { lineItems: [{ amount: 10, lineItemId: 'LI-1' }], invoiceNumber: 'INV-1', vendorId: 'V-100' };
    expect(argumentsDigest(reordered)).toBe(argumentsDigest(INVOICE));
    expect(argumentsDigest({ ...INVOICE, invoiceNumber: 'INV-2' })).not.toBe(argumentsDigest(INVOICE));
    // Array order is part of the value.
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
    expect(canonicalJson({ b: 1, a: undefined })).toBe('{"b":1}');
  });
});

describe('LocalTaskStore.openCall', () => {
  test('openCall: a call whose answer never came is open; its key is what a new call is sent with', () => {
    const s = store();
    intent(s, 'k1', 1);
    expect(s.openCall(SERVER, TOOL, { ...INVOICE })).toEqual({ call: expect.objectContaining({ key: 'k1', at: at(1) }) });
  });

  test('openCall: a call whose task has no end in the store is open, with what the store knows of the task', () => {
    const s = store();
    intent(s, 'k1', 1);
    created(s, 'k1', 'invoice-1', 1);
    s.append({ type: 'status', taskId: 'invoice-1', status: 'input_required', at: at(2) });
    expect(s.openCall(SERVER, TOOL, INVOICE)).toMatchObject({
      call: { key: 'k1', taskId: 'invoice-1' },
      task: { taskId: 'invoice-1', createdAt: at(1), status: 'input_required' },
    });
  });

  test('openCall: ended, given up and gone calls are not open, nor calls of another server, tool or arguments', () => {
    const s = store();
    intent(s, 'ended', 1);
    created(s, 'ended', 'invoice-ended', 1);
    s.append({ type: 'status', taskId: 'invoice-ended', status: 'completed', at: at(2) });
    intent(s, 'given-up', 3);
    s.append({ type: 'abandoned', key: 'given-up', reason: 'No task was started', at: at(4) });
    intent(s, 'gone', 5);
    created(s, 'gone', 'invoice-gone', 5);
    s.append({ type: 'gone', taskId: 'invoice-gone', reason: 'Task not found', at: at(6) });
    intent(s, 'other-server', 7, INVOICE, 'stdio');
    intent(s, 'other-tool', 8, INVOICE, SERVER, 'other_tool');
    intent(s, 'other-args', 9, { ...INVOICE, invoiceNumber: 'INV-2' });
    expect(s.openCall(SERVER, TOOL, INVOICE)).toBeUndefined();
  });

  test('openCall: of several open calls, the latest is adopted', () => {
    const s = store();
    intent(s, 'older', 1);
    created(s, 'older', 'invoice-older', 1);
    intent(s, 'newer', 2);
    expect(s.openCall(SERVER, TOOL, INVOICE)?.call.key).toBe('newer');
  });

  test('tasks: a call sent again with its key keeps the answers the store remembered for its task', () => {
    const s = store();
    intent(s, 'k1', 1);
    created(s, 'k1', 'invoice-1', 1);
    s.append({ type: 'answered', taskId: 'invoice-1', key: 'approval', response: { action: 'accept' }, source: 'flag', at: at(2) });
    created(s, 'k1', 'invoice-1', 3);
    expect(s.task('invoice-1')?.answers.get('approval')).toEqual({ action: 'accept' });
  });
});
