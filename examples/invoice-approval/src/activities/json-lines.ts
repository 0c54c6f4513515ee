import { promises as fs } from 'node:fs';

/**
 * Hands every complete line of a JSON-lines file, parsed, to `each` (how earlier versions kept the ledger and the ERP
 * registry; a line cut short by a crash is left out), then renames the file to `<file>.imported`, so it is read once.
 * A crash before the rename reads it again next time, so `each` must be idempotent. Returns how many lines it read, or
 * undefined when there is no such file.
 */
export async function importJsonLines<R>(file: string, each: (record: R) => Promise<unknown>): Promise<number | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const records = text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as R);
  for (const record of records) await each(record);
  await fs.rename(file, `${file}.imported`);
  return records.length;
}
