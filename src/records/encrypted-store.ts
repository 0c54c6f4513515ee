/**
 * Decision records encrypted at rest. A record's body holds what the person was shown (the invoice, its lines and
 * amounts) and their comment; with payload keys set, the store keeps the body encrypted under the first key and only
 * what the store needs in the clear: the task id, the seq, the digest and the bridge's signature. Readers get the
 * record back as it was signed, so signatures and digests verify as before. Node only.
 */
import { PayloadKeys, UnknownPayloadKeyError, PayloadDecryptionError } from '../shared/payload-keys';
import { DecisionStoreError } from './store-error';
import type { AppendOutcome, DecisionRecordBody, DecisionStore, SignedDecisionRecord } from '../contract/decision-records';

/** A record as an encrypting store holds it: the body's place-keeping fields in the clear, the body encrypted. */
interface StoredEncryptedRecord extends Omit<SignedDecisionRecord, 'body'> {
  body: Pick<DecisionRecordBody, 'taskId' | 'seq'>;
  /** The canonical body, AES-256-GCM under `keyId`, base64url; its task id, seq and digest are authenticated with it. */
  encryptedBody: { keyId: string; data: string };
}

/**
 * A store whose records' bodies are encrypted under `keys` (none: records are written in the clear). Either way it
 * reads both kinds, so records written before the keys were set still read; an encrypted record read without its key
 * throws {@link DecisionStoreError} saying which key to add.
 */
export class EncryptedDecisionStore implements DecisionStore {
  constructor(
    private readonly inner: DecisionStore,
    private readonly keys: PayloadKeys | undefined,
  ) {}

  async records(taskId: string): Promise<SignedDecisionRecord[]> {
    return (await this.inner.records(taskId)).map((record) => this.open(record));
  }

  append(record: SignedDecisionRecord): Promise<AppendOutcome> {
    return this.inner.append(this.keys ? this.seal(record, this.keys) : record);
  }

  location(): string {
    return this.keys ? `${this.inner.location()} (encrypted with key ${this.keys.encryptingKeyId})` : this.inner.location();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private seal(record: SignedDecisionRecord, keys: PayloadKeys): SignedDecisionRecord {
    const { body, ...rest } = record;
    const sealed = keys.seal(Buffer.from(JSON.stringify(body)), associatedData(body.taskId, body.seq, record.digest));
    const stored: StoredEncryptedRecord = {
      ...rest,
      body: { taskId: body.taskId, seq: body.seq },
      encryptedBody: { keyId: sealed.keyId, data: Buffer.from(sealed.data).toString('base64url') },
    };
    // The stores keep records as JSON and look only at the task id, the seq and the digest.
    return stored as unknown as SignedDecisionRecord;
  }

  private open(record: SignedDecisionRecord): SignedDecisionRecord {
    const stored = record as unknown as Partial<StoredEncryptedRecord>;
    const encrypted = stored.encryptedBody;
    if (encrypted === undefined) return record;
    const where = `record ${String(stored.body?.seq)} of task ${String(stored.body?.taskId)} in ${this.inner.location()}`;
    if (!this.keys) {
      throw new DecisionStoreError(
        `${where} is encrypted (key "${encrypted.keyId}"): set MCP_PAYLOAD_KEYS to the keys file that holds that key`,
        this.inner.location(),
      );
    }
    let plaintext: Buffer;
    try {
      plaintext = this.keys.open(
        { keyId: encrypted.keyId, data: Buffer.from(encrypted.data, 'base64url') },
        associatedData(String(stored.body?.taskId), Number(stored.body?.seq), String(stored.digest)),
      );
    } catch (error) {
      if (error instanceof UnknownPayloadKeyError || error instanceof PayloadDecryptionError) {
        throw new DecisionStoreError(`${where}: ${error.message}`, this.inner.location());
      }
      throw error;
    }
    const { encryptedBody: _encrypted, body: _place, ...rest } = stored;
    return { ...rest, body: JSON.parse(plaintext.toString('utf8')) as DecisionRecordBody } as SignedDecisionRecord;
  }
}

/** What a record's ciphertext is bound to: it cannot be moved to another task, place or digest. */
function associatedData(taskId: string, seq: number, digest: string): Buffer {
  return Buffer.from(JSON.stringify(['temporal-mcp-tasks decision record v1', taskId, seq, digest]));
}
