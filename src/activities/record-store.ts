import { createHash, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { syncDirectory, writeFileOnce } from '../util/durable-files';

/** A record of a {@link RecordStore}: any JSON object with a unique `key`. */
export interface KeyedRecord {
  key: string;
}

/** Thrown when a record file holds a key its name does not stand for: a file put there by hand, or damaged. */
export class RecordKeyMismatchError extends Error {
  constructor(
    readonly file: string,
    readonly foundKey: unknown,
  ) {
    super(`${file} holds the record of key ${JSON.stringify(foundKey)}, which is not the key its name stands for`);
    this.name = 'RecordKeyMismatchError';
  }
}

/** Thrown when the store's path exists but is not a directory, e.g. a JSON-lines file of an earlier version. */
export class NotAStoreDirectoryError extends Error {
  constructor(readonly dir: string) {
    super(`${dir} is not a directory; a record store is a directory of one JSON file per key`);
    this.name = 'NotAStoreDirectoryError';
  }
}

/** Names of record files: the SHA-256 of the key, in hex. */
const RECORD_FILE = /^[0-9a-f]{64}\.json$/;
/** Suffix of the temporary files records are written to before they get their name. */
const TEMP_SUFFIX = '.tmp';
/** How many record files {@link RecordStore.all} reads at once. */
const READ_BATCH = 64;

/**
 * A directory of immutable JSON records, at most one per key, created atomically and without locks.
 *
 * The record of a key lives in `<sha256(key)>.json`. A writer writes it whole to a temporary file of its own
 * (`<sha256(key)>.<uuid>.tmp`), fsyncs it, and `link()`s it to the record's name, which fails when the name exists:
 * of concurrent writers of one key, in any process or on any host sharing the directory, exactly one creates the record
 * and the others read and return it. A name therefore only ever points at a complete record. The directory is fsynced
 * before a record is returned, so a record once returned survives a crash. A crash at any point leaves at most a
 * temporary file, which readers ignore and writers remove once it is {@link RecordStore.tempMaxAgeMs} old. Nothing
 * depends on which processes are alive. Needs a file system with hard links (any local POSIX one, NFS).
 */
export class RecordStore<T extends KeyedRecord> {
  private ready: Promise<void> | undefined;

  constructor(
    readonly dir: string,
    /** Age past which a temporary file is a crashed writer's and is removed. */
    readonly tempMaxAgeMs = 3_600_000,
  ) {}

  /** The record of `key`, or undefined when there is none. Throws {@link RecordKeyMismatchError} for a foreign file. */
  async get(key: string): Promise<T | undefined> {
    return this.read(this.fileOf(key));
  }

  /**
   * Returns the record of `key`, creating it from `make()` if there is none; `created` tells which happened. Concurrent
   * callers with the same key, in any process, all get the one record that was created. Durable when it returns.
   */
  async createOnce(key: string, make: () => T): Promise<{ record: T; created: boolean }> {
    await this.prepare();
    const file = this.fileOf(key);
    const existing = await this.read(file);
    if (existing) {
      // Its writer may not have fsynced the directory yet: make sure what we return is durable.
      await this.syncDir();
      return { record: existing, created: false };
    }
    const record = make();
    if (record.key !== key) throw new Error(`record key ${record.key} does not match ${key}`);
    const temp = `${file.slice(0, -'.json'.length)}.${randomUUID()}${TEMP_SUFFIX}`;
    // Readable by the worker's user only: a record names invoices, amounts and payment ids.
    const created = await writeFileOnce(file, temp, `${JSON.stringify(record)}\n`);
    await this.syncDir();
    if (created) return { record, created: true };
    // Another writer created the record first; it is complete, since it got its name only once written.
    const winner = await this.read(file);
    if (!winner) throw new Error(`the record ${file} disappeared after another writer created it`);
    return { record: winner, created: false };
  }

  /** Every record, in no particular order. A missing directory is an empty store; temporary files are not records. */
  async all(): Promise<T[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') throw new NotAStoreDirectoryError(this.dir);
      throw error;
    }
    const files = names.filter((name) => RECORD_FILE.test(name));
    const records: T[] = [];
    for (let at = 0; at < files.length; at += READ_BATCH) {
      const batch = await Promise.all(files.slice(at, at + READ_BATCH).map((name) => this.read(path.join(this.dir, name))));
      for (const record of batch) if (record) records.push(record);
    }
    return records;
  }

  /** The file of `key`'s record. */
  fileOf(key: string): string {
    return path.join(this.dir, `${createHash('sha256').update(key, 'utf8').digest('hex')}.json`);
  }

  private async read(file: string): Promise<T | undefined> {
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') throw new NotAStoreDirectoryError(this.dir);
      throw error;
    }
    const record = JSON.parse(text) as T;
    if (typeof record?.key !== 'string' || this.fileOf(record.key) !== file) throw new RecordKeyMismatchError(file, record?.key);
    return record;
  }

  /** Creates the directory once per store object and removes temporary files of crashed writers. */
  private prepare(): Promise<void> {
    this.ready ??= this.createDir().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  private async createDir(): Promise<void> {
    const stat = await fs.stat(this.dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (stat && !stat.isDirectory()) throw new NotAStoreDirectoryError(this.dir);
    if (!stat) {
      await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
      // The new directory's own name must survive a crash too.
      await syncDirectory(path.dirname(this.dir));
    }
    const now = Date.now();
    for (const name of await fs.readdir(this.dir)) {
      if (!name.endsWith(TEMP_SUFFIX)) continue;
      const file = path.join(this.dir, name);
      const age = await fs.stat(file).then(
        (temp) => now - temp.mtimeMs,
        () => 0,
      );
      if (age > this.tempMaxAgeMs) await fs.unlink(file).catch(() => undefined);
    }
  }

  private syncDir(): Promise<void> {
    return syncDirectory(this.dir);
  }
}
