/**
 * Bearer tokens per server: a token goes only to the server it was given for. `--token` (or `MCP_TOKEN`) belongs to
 * `--url`, and is remembered for that server in the state directory (`tokens.json`, readable by its owner only), so a
 * later `resume` sends each server its own token and never one server's token to another.
 */
import { chmodSync, closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';

/** The tokens the client knows, by server URL. */
export class ServerTokens {
  private readonly file: string;

  constructor(stateDir: string) {
    this.file = path.join(stateDir, 'tokens.json');
  }

  /** The token for `url`, if one was remembered. */
  get(url: string): string | undefined {
    const token = this.read()[canonical(url)];
    return typeof token === 'string' ? token : undefined;
  }

  /** Remembers `token` for `url` (replacing an older one); written atomically with mode 0600. */
  remember(url: string, token: string): void {
    const all = this.read();
    if (all[canonical(url)] === token) return;
    all[canonical(url)] = token;
    const temporary = `${this.file}.${process.pid}.tmp`;
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(all, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    chmodSync(temporary, 0o600);
    renameSync(temporary, this.file);
  }

  private read(): Record<string, unknown> {
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as unknown;
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
}

/** One spelling per server: scheme and host lower-case, no trailing slash. */
function canonical(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, '')}`;
  } catch {
    return url;
  }
}
