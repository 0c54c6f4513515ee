/**
 * Files written once and durably: a file gets its name only once its whole content is on disk, and a second writer of
 * the same name finds the first one's file complete.
 */
import { closeSync, fsyncSync, openSync, promises as fs, renameSync, rmSync, writeSync } from 'node:fs';

/**
 * Writes `text` to `file` unless a file of that name exists: written to `temp` (readable by its owner only), synced,
 * then linked to its name, so the name never shows a partial file. False when another writer's file has the name (its
 * content untouched); other failures are thrown. The folder is not synced: call {@link syncDirectory} after.
 */
export async function writeFileOnce(file: string, temp: string, text: string): Promise<boolean> {
  try {
    const handle = await fs.open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.link(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await fs.unlink(temp).catch(() => undefined);
  }
}

/** Syncs a folder, so that names created or removed in it are durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `file` with `text`, whole or not at all: written to `temp` (which must not exist) with `mode`, synced, then
 * renamed to `file` (a rename replaces a link at `file`, it does not follow one). `temp` is removed on failure; the
 * failure is thrown.
 */
export function replaceFileDurably(file: string, temp: string, text: string, mode = 0o644): void {
  try {
    const fd = openSync(temp, 'wx', mode);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
