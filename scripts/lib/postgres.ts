/**
 * A PostgreSQL server of its own in a folder (Debian's packages): initialised there once, listening on 127.0.0.1 at a
 * given port, trusting local connections. The cluster stack keeps Temporal's persistence in one; tests start one
 * in a temporary folder.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** The folder of PostgreSQL's binaries (the newest version installed), or undefined when there is none. */
export function findPostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  return readdirSync(root)
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => path.join(root, version, 'bin'))
    .find((bin) => existsSync(path.join(bin, 'initdb')));
}

export interface LocalPostgresOptions {
  /** The data folder (created and initialised when it holds no cluster). */
  dataDir: string;
  port: number;
  /** PostgreSQL's binaries; default {@link findPostgresBin}. */
  bin?: string;
  maxConnections?: number;
  /** Progress lines. */
  say?: (line: string) => void;
}

/** One PostgreSQL server: {@link start}, {@link stop}, and `psql` as the superuser `postgres`. */
export class LocalPostgres {
  readonly dataDir: string;
  readonly port: number;
  private readonly bin: string;
  private readonly say: (line: string) => void;

  constructor(private readonly options: LocalPostgresOptions) {
    this.dataDir = path.resolve(options.dataDir);
    this.port = options.port;
    const bin = options.bin ?? findPostgresBin();
    if (!bin) throw new Error('PostgreSQL is not installed: apt-get install postgresql');
    this.bin = bin;
    this.say = options.say ?? (() => undefined);
  }

  /** A connection URL of `database` as the superuser (no password: local connections are trusted). */
  url(database = 'postgres'): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** True while a server runs in the data folder (its pid file is there). */
  get running(): boolean {
    return existsSync(path.join(this.dataDir, 'postmaster.pid'));
  }

  /** Initialises the data folder if it holds no cluster, then starts the server and waits until it accepts connections. */
  start(): void {
    const asRoot = process.getuid?.() === 0;
    if (!existsSync(path.join(this.dataDir, 'PG_VERSION'))) {
      this.say(`initializing PostgreSQL in ${this.dataDir}`);
      mkdirSync(this.dataDir, { recursive: true });
      // PostgreSQL runs as its own user when we are root, and must reach its folder (the parent's files stay private).
      if (asRoot) {
        chmodSync(path.dirname(this.dataDir), 0o711);
        const { uid, gid } = postgresUser();
        chownSync(this.dataDir, uid, gid);
      }
      chmodSync(this.dataDir, 0o700);
      this.run('initdb', ['-D', this.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C']);
    }
    this.say(`starting PostgreSQL on 127.0.0.1:${this.port}`);
    const options = `-p ${this.port} -k ${this.dataDir} -c listen_addresses=127.0.0.1 -c max_connections=${this.options.maxConnections ?? 200}`;
    this.run('pg_ctl', ['-D', this.dataDir, '-o', options, '-l', path.join(this.dataDir, 'server.log'), '-w', 'start']);
  }

  /** Stops the server: `fast` ends sessions cleanly, `immediate` as a crash would. Nothing when it is not running. */
  stop(mode: 'fast' | 'immediate' = 'fast'): void {
    if (!this.running) return;
    this.run('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', 'stop']);
  }

  /** Runs one SQL text with psql as `postgres` and returns its unaligned output. */
  psql(sql: string, database = 'postgres'): string {
    return execFileSync(
      'psql',
      ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-d', database, '-v', 'ON_ERROR_STOP=1', '-tAc', sql],
      {
        encoding: 'utf8',
      },
    );
  }

  /** The rows of `database` as `pg_dump --data-only` writes them (COPY text; bytea as `\\x` and hex). */
  dumpData(database: string): string {
    return execFileSync(
      path.join(this.bin, 'pg_dump'),
      ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '--data-only', '--no-owner', database],
      { encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024 },
    );
  }

  /** Runs a PostgreSQL binary, as the `postgres` user when this process is root (PostgreSQL refuses root). */
  private run(command: string, args: string[]): string {
    const full = path.join(this.bin, command);
    const asRoot = process.getuid?.() === 0;
    const [bin, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', full, ...args]] : [full, args];
    const result = spawnSync(bin, argv, { encoding: 'utf8', cwd: '/' });
    if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stderr}${result.stdout}`);
    return result.stdout;
  }
}

function postgresUser(): { uid: number; gid: number } {
  const [uid, gid] = execFileSync('sh', ['-c', 'id -u postgres; id -g postgres'], { encoding: 'utf8' }).trim().split('\n').map(Number);
  return { uid, gid };
}
