/**
 * The pure parts of payload encryption: the keys file, the codec's payload shape (Temporal's encryption samples'),
 * the decision store's encrypted records, and the codec server's JSON bodies.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { createNotificationActivities, readNotifications } from '../../src/activities/notifications';
import { NOTIFY_ACTIVITY, type DecisionNotification } from '../../src/contract/approvals';
import { temporal } from '@temporalio/proto';
import { EncryptedDecisionStore } from '../../src/records/encrypted-store';
import { FileDecisionStore } from '../../src/records/file-store';
import { appendChained } from '../../src/records/store';
import { bodyOfPayloads, payloadsOfBody, PayloadsBodyError } from '../../src/codec/payload-json';
import { EncryptionCodec } from '../../src/shared/payload-codec';
import {
  parsePayloadKeys,
  PayloadDecryptionError,
  PayloadKeys,
  PayloadKeysError,
  payloadKeysFromEnv,
  readPayloadKeys,
  UnknownPayloadKeyError,
} from '../../src/shared/payload-keys';
import { bodyOf, testSigner } from '../helpers/decision-records';

const key = (byte: number) => Buffer.alloc(32, byte);
const text = new TextDecoder();

describe('the keys file', () => {
  test('reads "keyId base64key" lines with comments and blank lines; the first key encrypts', () => {
    const keys = parsePayloadKeys(
      `# rotated 2026-12\n\nk2 ${key(2).toString('base64')}\n  k1   ${key(1).toString('base64url')}  \n`,
      'keys',
    );
    expect(keys.encryptingKeyId).toBe('k2');
    expect(keys.keyIds).toEqual(['k2', 'k1']);
  });

  test.each([
    ['', /keys holds no key: write a "keyId base64key" line/],
    ['k1', /keys line 1: expected "keyId base64key", found 1 field/],
    [`k1 ${key(1).toString('base64')} extra`, /line 1: expected "keyId base64key", found 3 field/],
    [`k/1 ${key(1).toString('base64')}`, /line 1: the key id "k\/1" is not 1-64 letters/],
    ['k1 not*base64', /line 1: the key of "k1" is not base64/],
    [`k1 ${randomBytes(31).toString('base64')}`, /line 1: the key of "k1" is 31 bytes; AES-256 needs 32/],
    [`k1 ${key(1).toString('base64')}\nk1 ${key(2).toString('base64')}`, /line 2: the key id "k1" is given twice/],
  ])('refuses %j', (content, message) => {
    expect(() => parsePayloadKeys(content, 'keys')).toThrow(PayloadKeysError);
    expect(() => parsePayloadKeys(content, 'keys')).toThrow(message);
  });

  describe('on disk', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'payload-keys-unit-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    test('a file others may read or write is refused; mode 600 is read', () => {
      const file = path.join(dir, 'keys');
      writeFileSync(file, `k1 ${key(1).toString('base64')}\n`);
      chmodSync(file, 0o604);
      expect(() => readPayloadKeys(file)).toThrow(/may be read or written by others \(mode 604\).*chmod 600/);
      chmodSync(file, 0o620);
      expect(() => readPayloadKeys(file)).toThrow(/mode 620/);
      chmodSync(file, 0o600);
      expect(readPayloadKeys(file).keyIds).toEqual(['k1']);
    });

    test('MCP_PAYLOAD_KEYS: unset or empty is no encryption; an error names the variable', () => {
      expect(payloadKeysFromEnv({})).toBeUndefined();
      expect(payloadKeysFromEnv({ MCP_PAYLOAD_KEYS: ' ' })).toBeUndefined();
      expect(() => payloadKeysFromEnv({ MCP_PAYLOAD_KEYS: path.join(dir, 'none') })).toThrow(
        /^MCP_PAYLOAD_KEYS: cannot read the keys file/,
      );
    });
  });
});

describe('the codec', () => {
  const keys = new PayloadKeys([
    ['k2', key(2)],
    ['k1', key(1)],
  ]);
  const codec = new EncryptionCodec(keys);
  const plain = defaultPayloadConverter.toPayload({ vendor: 'Acme', amount: 4321.87 });

  test("encrypts the serialized payload under the first key, in the shape of Temporal's encryption samples", async () => {
    const [encoded] = await codec.encode([plain]);
    expect(text.decode(encoded.metadata!.encoding)).toBe('binary/encrypted');
    expect(text.decode(encoded.metadata!['encryption-key-id'])).toBe('k2');
    expect(Object.keys(encoded.metadata!)).toEqual(['encoding', 'encryption-key-id']);
    expect(Buffer.from(encoded.data!).includes('Acme')).toBe(false);
    // IV, ciphertext of the payload's protobuf, tag.
    expect(encoded.data!.length).toBe(12 + temporal.api.common.v1.Payload.encode(plain).finish().length + 16);
    const [decoded] = await codec.decode([encoded]);
    expect(defaultPayloadConverter.fromPayload(decoded)).toEqual({ vendor: 'Acme', amount: 4321.87 });
  });

  test('decrypts under any key it holds, and passes a payload that is not encrypted through', async () => {
    const old = new EncryptionCodec(new PayloadKeys([['k1', key(1)]]));
    const [underK1] = await old.encode([plain]);
    expect(defaultPayloadConverter.fromPayload((await codec.decode([underK1]))[0])).toEqual({ vendor: 'Acme', amount: 4321.87 });
    expect(await codec.decode([plain])).toEqual([plain]);
  });

  test('a payload of a key it does not hold, or altered, is an error that names the key', async () => {
    const [encoded] = await new EncryptionCodec(new PayloadKeys([['k9', key(9)]])).encode([plain]);
    await expect(codec.decode([encoded])).rejects.toThrow(UnknownPayloadKeyError);
    await expect(codec.decode([encoded])).rejects.toThrow('data encrypted with key "k9" cannot be read');
    const [mine] = await codec.encode([plain]);
    const altered: Payload = { ...mine, data: Buffer.from(mine.data!).map((byte, index) => (index === 20 ? byte ^ 1 : byte)) };
    await expect(codec.decode([altered])).rejects.toThrow(PayloadDecryptionError);
    const sameIdOtherKey = new EncryptionCodec(new PayloadKeys([['k2', key(7)]]));
    await expect(sameIdOtherKey.decode([mine])).rejects.toThrow('data encrypted with key "k2" does not decrypt');
  });
});

describe('decision records encrypted at rest', () => {
  const { signer } = testSigner();
  const keys = new PayloadKeys([['k1', key(1)]]);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'encrypted-store-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('the store holds the body encrypted and hands back the record as it was signed', async () => {
    const files = new FileDecisionStore(dir);
    const store = new EncryptedDecisionStore(files, keys);
    const made = await appendChained(store, 'task-1', (seq, prev) =>
      signer.sign(bodyOf('task-1', seq, prev, { decision: 'approve', by: 'ann', comment: 'Wombat' })),
    );
    const [raw] = await files.records('task-1');
    expect(JSON.stringify(raw)).not.toContain('Wombat');
    expect(raw).toMatchObject({ body: { taskId: 'task-1', seq: 1 }, digest: made.digest, encryptedBody: { keyId: 'k1' } });
    expect(await store.records('task-1')).toEqual([made]);
    // Appending the same record again is a duplicate, as in the clear.
    expect(await store.append(made)).toBe('duplicate');
  });

  test('records written in the clear still read; an encrypted one read without keys, or moved, is an error saying why', async () => {
    const files = new FileDecisionStore(dir);
    const clear = await appendChained(files, 'task-2', (seq, prev) =>
      signer.sign(bodyOf('task-2', seq, prev, { decision: 'approve', by: 'ann' })),
    );
    expect(await new EncryptedDecisionStore(files, keys).records('task-2')).toEqual([clear]);
    await appendChained(new EncryptedDecisionStore(files, keys), 'task-3', (seq, prev) =>
      signer.sign(bodyOf('task-3', seq, prev, { decision: 'approve', by: 'ann' })),
    );
    await expect(new EncryptedDecisionStore(files, undefined).records('task-3')).rejects.toThrow(
      /record 1 of task task-3 in .* is encrypted \(key "k1"\): set MCP_PAYLOAD_KEYS/,
    );
    await expect(new EncryptedDecisionStore(files, new PayloadKeys([['k1', key(5)]])).records('task-3')).rejects.toThrow(
      /record 1 of task task-3 .*: data encrypted with key "k1" does not decrypt/,
    );
  });
});

describe('the notification outbox with payload keys', () => {
  test('a line keeps who, when and which question in the clear and the question itself encrypted; read back with the keys', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'outbox-'));
    try {
      const outbox = path.join(dir, 'outbox.jsonl');
      const keys = new PayloadKeys([['k1', key(1)]]);
      const notify = createNotificationActivities(outbox, undefined, keys)[NOTIFY_ACTIVITY];
      const notification: DecisionNotification = {
        id: 'task-1/approval/asked/1',
        kind: 'asked',
        taskId: 'task-1',
        key: 'approval',
        message: 'Approve invoice INV-77 from Acme Office Supplies?',
        audience: { roles: ['ap-approver'], required: 1 },
        subject: { invoiceNumber: 'INV-77', total: 4321.87 },
        accepted: 0,
        required: 1,
        at: '2026-12-02T10:00:00.000Z',
      };
      await new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') }).run(notify, notification);
      const line = readFileSync(outbox, 'utf8');
      expect(line).not.toMatch(/INV-77|Acme|4321/);
      expect(JSON.parse(line)).toMatchObject({ id: notification.id, kind: 'asked', taskId: 'task-1', encrypted: { keyId: 'k1' } });
      expect(await readNotifications(outbox, keys)).toEqual([notification]);
      await expect(readNotifications(outbox)).rejects.toThrow(
        `notification ${notification.id} is encrypted (key "k1"): read it with MCP_PAYLOAD_KEYS`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the codec server's bodies", () => {
  test('proto3 JSON payloads in and out', () => {
    const payloads = payloadsOfBody(
      JSON.stringify({ payloads: [{ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: 'e30=' }] }),
    );
    expect(text.decode(payloads[0].metadata!.encoding)).toBe('json/plain');
    expect(text.decode(payloads[0].data!)).toBe('{}');
    expect(JSON.parse(bodyOfPayloads(payloads))).toEqual({ payloads: [{ metadata: { encoding: 'anNvbi9wbGFpbg==' }, data: 'e30=' }] });
    expect(payloadsOfBody('{}')).toEqual([]);
  });

  test.each([
    ['not json', 'the body is not JSON'],
    ['[]', 'the body must be an object'],
    ['{"payloads": {}}', '"payloads" must be an array'],
    ['{"payloads": [1]}', 'payloads[0] must be an object'],
    ['{"payloads": [{"metadata": {"encoding": 5}}]}', 'payloads[0].metadata.encoding must be a base64 string'],
    ['{"payloads": [{"data": "%%"}]}', 'payloads[0].data must be a base64 string'],
  ])('refuses %s', (body, message) => {
    expect(() => payloadsOfBody(body)).toThrow(PayloadsBodyError);
    expect(() => payloadsOfBody(body)).toThrow(message);
  });
});
