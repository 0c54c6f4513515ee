import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { sleep } from '../util/wait';

/** Thrown when the store's lock cannot be taken in time, e.g. another process holds it for too long. */
export class StoreLockTimeoutError extends Error {
  constructor(
    readonly lockPath: string,
    readonly waitedMs: number,
  ) {
    super(`could not lock ${lockPath} within ${waitedMs} ms; another process holds it`);
    this.name = 'StoreLockTimeoutError';
  }
}

/** Writers of this process, per file: they queue here rather than spin on the file lock. */
const localQueues = new Map<string, Promise<unknown>>();

/** A record of an append-only store: any JSON object with a unique `key`. */
export interface KeyedRecord {
  key: string;
}

/**
 * An append-only file of JSON lines in which each `key` appears at most once, across processes.
 *
 * Writers serialise on a lock file created with O_EXCL; a lock left by a dead process is broken. A line torn by a
 * crash mid-write never completed, so it is cut off before the next append.
 */
export class JsonlStore<T extends KeyedRecord> {
  constructor(
    readonly file: string,
    private readonly lockTimeoutMs = 30_000,
  ) {}

  /** All complete records, in the order they were written. A missing file is an empty store. */
  async readAll(): Promise<T[]> {
    const text = await fs.readFile(this.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    const complete = text.slice(0, text.lastIndexOf('\n') + 1);
    return complete
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as T);
  }

  /** The record stored under `key`, if any. */
  async find(key: string): Promise<T | undefined> {
    return (await this.readAll()).find((record) => record.key === key);
  }

  /**
   * Returns the record stored under `key`, or appends the one `create` makes and returns it, durably (fsync).
   * `created` tells which happened. Concurrent callers with the same key get the same record.
   */
  async recordOnce(key: string, create: () => T): Promise<{ record: T; created: boolean }> {
    return this.withLock(async () => {
      await this.cutTornTail();
      const existing = await this.find(key);
      if (existing) return { record: existing, created: false };
      const record = create();
      if (record.key !== key) throw new Error(`record key ${record.key} does not match ${key}`);
      const handle = await fs.open(this.file, 'a');
      try {
        await handle.appendFile(`${JSON.stringify(record)}\n`, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      return { record, created: true };
    });
  }

  private async cutTornTail(): Promise<void> {
    const text = await fs.readFile(this.file, 'utf8').catch(() => '');
    if (text === '' || text.endsWith('\n')) return;
    await fs.truncate(this.file, Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1)));
  }

  private withLock<R>(work: () => Promise<R>): Promise<R> {
    const previous = localQueues.get(this.file) ?? Promise.resolve();
    const next = previous.then(
      () => this.withFileLock(work),
      () => this.withFileLock(work),
    );
    localQueues.set(this.file, next);
    void next
      .finally(() => {
        if (localQueues.get(this.file) === next) localQueues.delete(this.file);
      })
      .catch(() => undefined);
    return next;
  }

  private async withFileLock<R>(work: () => Promise<R>): Promise<R> {
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    const lockPath = `${this.file}.lock`;
    const token = `${process.pid} ${randomUUID()}`;
    const started = Date.now();
    for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
      try {
        await fs.writeFile(lockPath, token, { flag: 'wx' });
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      await breakIfStale(lockPath);
      if (Date.now() - started > this.lockTimeoutMs) throw new StoreLockTimeoutError(lockPath, Date.now() - started);
      await sleep(delay);
    }
    try {
      return await work();
    } finally {
      const holder = await fs.readFile(lockPath, 'utf8').catch(() => '');
      if (holder === token) await fs.unlink(lockPath).catch(() => undefined);
    }
  }
}

/** Removes a lock whose owning process is gone. A second directory lock keeps two breakers apart. */
async function breakIfStale(lockPath: string): Promise<void> {
  const holder = await fs.readFile(lockPath, 'utf8').catch(() => undefined);
  if (holder === undefined) return;
  // An empty lock was just created and its token is not written yet; only a long-empty one is stale.
  if (
    holder === '' &&
    Date.now() -
      (await fs
        .stat(lockPath)
        .then((stat) => stat.mtimeMs)
        .catch(() => Date.now())) <
      10_000
  )
    return;
  if (holder !== '' && processAlive(Number(holder.split(' ')[0]))) return;
  const breaker = `${lockPath}.break`;
  try {
    await fs.mkdir(breaker);
  } catch {
    return;
  }
  try {
    // Re-read under the breaker: the lock may have changed hands since the first read.
    if ((await fs.readFile(lockPath, 'utf8').catch(() => undefined)) === holder) await fs.unlink(lockPath);
  } finally {
    await fs.rmdir(breaker).catch(() => undefined);
  }
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
