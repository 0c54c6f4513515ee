/**
 * The decision store of a dev stack: a directory with one folder per task and one file per record, named by its place
 * in the chain. Node only.
 */
import { createHash, randomUUID } from 'node:crypto';
import { constants as fsConstants, promises as fs } from 'node:fs';
import path from 'node:path';
import type { AppendOutcome, DecisionStore, SignedDecisionRecord } from '../contract/decision-records';
import { DamagedRecordError, DecisionStoreError } from './store-error';
import { syncDirectory, writeFileOnce } from '../util/durable-files';

/** Record files: the zero-padded seq. */
const RECORD_FILE = /^(\d{10})\.json$/;
const SEQ_DIGITS = 10;
const MAX_SEQ = 10 ** SEQ_DIGITS - 1;
/** The largest record file read or written: a record is a question, what it showed and one decision. */
export const MAX_RECORD_BYTES = 1024 * 1024;
/** Opens a record file without following a link, and without waiting for a writer if it is a pipe. */
const OPEN_RECORD = fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK;
/** Folder names longer than this are a digest of the task id instead. */
const MAX_FOLDER_NAME = 200;
/**
 * The most record files a task's folder may hold, and the most bytes they may hold together: a task's decisions are a
 * few records. A folder past either was filled by hand, and that task's chain is broken ({@link DamagedRecordError}).
 */
export const MAX_RECORDS_PER_TASK = 10_000;
export const MAX_TASK_BYTES = 64 * 1024 * 1024;
/** Record files of one task read at once: never a file handle per record. */
const READS_AT_ONCE = 8;

/**
 * A directory of decision records: `<dir>/<task>/<seq, 10 digits>.json`, each file written whole to a temporary file
 * of its own, fsynced, then given its name by `link()`, which fails when the name exists. So two writers, in any
 * process on any host sharing the directory, never take one seq; a name only ever points at a complete record; and an
 * existing file is never rewritten. The folder is fsynced before `append` returns, so an appended record survives a
 * crash. Readers ignore temporary files a crash left behind.
 */
export class FileDecisionStore implements DecisionStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  async records(taskId: string): Promise<SignedDecisionRecord[]> {
    const folder = this.folderOf(taskId);
    const files = await this.recordFilesOf(taskId, folder);
    const records: SignedDecisionRecord[] = new Array(files.length);
    let bytes = 0;
    let next = 0;
    const reader = async () => {
      while (next < files.length) {
        const index = next++;
        const record = await this.read(path.join(folder, files[index]));
        records[index] = record;
        bytes += JSON.stringify(record).length;
        if (bytes > MAX_TASK_BYTES) {
          throw new DamagedRecordError(
            `the decision records of ${taskId} in ${folder} hold more than ${MAX_TASK_BYTES} bytes: the folder was filled by hand`,
            this.location(),
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, files.length) }, reader));
    return records;
  }

  /**
   * The record files of a task's folder, in seq order, listed one entry at a time; none when it has no folder. A folder
   * with more than {@link MAX_RECORDS_PER_TASK} is a {@link DamagedRecordError}, found before any is opened.
   */
  private async recordFilesOf(taskId: string, folder: string): Promise<string[]> {
    const files: string[] = [];
    try {
      const entries = await fs.opendir(folder, { bufferSize: 256 });
      for await (const entry of entries) {
        if (!RECORD_FILE.test(entry.name)) continue;
        files.push(entry.name);
        // Leaving the loop closes the folder.
        if (files.length > MAX_RECORDS_PER_TASK) {
          throw new DamagedRecordError(
            `the decision records of ${taskId} in ${folder} are more than ${MAX_RECORDS_PER_TASK} files: the folder was filled by hand`,
            this.location(),
          );
        }
      }
    } catch (error) {
      if (error instanceof DecisionStoreError) throw error;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new DecisionStoreError(
        `cannot read the decision records of ${taskId} in ${folder}: ${(error as Error).message}`,
        this.location(),
      );
    }
    return files.sort();
  }

  async append(record: SignedDecisionRecord): Promise<AppendOutcome> {
    const { taskId, seq } = record.body;
    if (!Number.isInteger(seq) || seq < 1 || seq > MAX_SEQ) {
      throw new DecisionStoreError(`a decision record's seq must be a whole number from 1, not ${seq}`, this.location());
    }
    const folder = this.folderOf(taskId);
    const file = path.join(folder, this.fileName(seq));
    const existing = await this.readIfThere(file);
    if (existing) return existing.digest === record.digest ? 'duplicate' : 'conflict';
    if (seq > 1 && !(await this.readIfThere(path.join(folder, this.fileName(seq - 1))))) {
      throw new DecisionStoreError(`record ${seq} of ${taskId} would leave a gap: record ${seq - 1} is not in the store`, this.location());
    }
    const text = `${JSON.stringify(record)}\n`;
    if (Buffer.byteLength(text) > MAX_RECORD_BYTES) {
      throw new DecisionStoreError(`a decision record of ${taskId} is larger than ${MAX_RECORD_BYTES} bytes`, this.location());
    }
    await this.makeFolder(folder);
    const temp = path.join(folder, `.${this.fileName(seq)}.${randomUUID()}.tmp`);
    let written: boolean;
    try {
      // Readable by the store's user only: a record names people and what they approved.
      written = await writeFileOnce(file, temp, text);
    } catch (error) {
      throw new DecisionStoreError(
        `cannot write a decision record of ${taskId} to ${folder}: ${(error as Error).message}`,
        this.location(),
      );
    }
    await syncDirectory(folder);
    if (!written) {
      // Another writer took this seq first; its file is complete, since it got its name only once written.
      const winner = await this.read(file);
      return winner.digest === record.digest ? 'duplicate' : 'conflict';
    }
    return 'appended';
  }

  location(): string {
    return `the decision records directory ${this.dir}`;
  }

  async close(): Promise<void> {}

  /**
   * The task's folder: the task id itself when it is a plain name (`[a-z0-9-]`, as workflow ids of tasks are), else
   * each other character written `_` and its hex code (one to one, and safe on any file system); `=` and a digest when
   * that is too long.
   */
  folderOf(taskId: string): string {
    if (typeof taskId !== 'string' || taskId === '') throw new DecisionStoreError('a decision record needs a task id', this.location());
    const escaped = [...taskId].map((char) => (/^[a-z0-9-]$/.test(char) ? char : `_${char.codePointAt(0)!.toString(16)}_`)).join('');
    const name = escaped.length <= MAX_FOLDER_NAME ? escaped : `=${createHash('sha256').update(taskId).digest('hex')}`;
    return path.join(this.dir, name);
  }

  private fileName(seq: number): string {
    return `${String(seq).padStart(SEQ_DIGITS, '0')}.json`;
  }

  private async makeFolder(folder: string): Promise<void> {
    try {
      await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
      await fs.mkdir(folder, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
      throw new DecisionStoreError(`cannot create ${folder}: ${(error as Error).message}`, this.location());
    }
    // A new folder is durable only once its parent is.
    await syncDirectory(this.dir);
  }

  private async readIfThere(file: string): Promise<SignedDecisionRecord | undefined> {
    return this.read(file, true);
  }

  /**
   * The record in `file`: a regular file of at most {@link MAX_RECORD_BYTES} holding JSON. Anything else put there (a
   * link, a pipe, a folder, a device, a huge file, damaged text) is a {@link DamagedRecordError}, found without
   * waiting on it; a file that is not there is one too, unless `missingOk`.
   */
  private async read(file: string, missingOk: true): Promise<SignedDecisionRecord | undefined>;
  private async read(file: string): Promise<SignedDecisionRecord>;
  private async read(file: string, missingOk = false): Promise<SignedDecisionRecord | undefined> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, OPEN_RECORD);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && missingOk) return undefined;
      if (code === 'ELOOP')
        throw new DamagedRecordError(`the decision record ${file} is a symbolic link, not a record file`, this.location());
      throw new DecisionStoreError(`cannot read the decision record ${file}: ${(error as Error).message}`, this.location());
    }
    let text: string;
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw new DamagedRecordError(`the decision record ${file} is not a regular file`, this.location());
      if (stat.size > MAX_RECORD_BYTES) {
        throw new DamagedRecordError(
          `the decision record ${file} is ${stat.size} bytes, more than a record's ${MAX_RECORD_BYTES}`,
          this.location(),
        );
      }
      text = await handle.readFile('utf8');
    } catch (error) {
      if (error instanceof DecisionStoreError) throw error;
      throw new DecisionStoreError(`cannot read the decision record ${file}: ${(error as Error).message}`, this.location());
    } finally {
      await handle.close();
    }
    try {
      return JSON.parse(text) as SignedDecisionRecord;
    } catch {
      throw new DamagedRecordError(`the decision record ${file} is not JSON: the file was damaged or put there by hand`, this.location());
    }
  }
}
