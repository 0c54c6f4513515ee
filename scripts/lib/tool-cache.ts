/**
 * The cache of built tools (the Temporal CLI and server, MCP Inspector, Python environments) that temporal-dev.sh, the
 * suite and the scripts share, and the environment of a first run: a home folder with nothing from earlier runs in it,
 * where only that cache is linked in.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** `$TEMPORAL_MCP_CACHE`, else `$XDG_CACHE_HOME/temporal-mcp`, else `~/.cache/temporal-mcp`: as temporal-dev.sh reads it. */
export function toolCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEMPORAL_MCP_CACHE || path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'temporal-mcp');
}

/** A home folder made empty for one run, and the variables that point there. */
export interface FreshHome {
  dir: string;
  /**
   * `HOME`, `XDG_CONFIG_HOME` and `XDG_STATE_HOME` in the empty folder; the caches of downloads and builds kept:
   * `TEMPORAL_MCP_CACHE`, npm's and pip's caches, and Go's settings and caches where Go is installed.
   */
  env: Record<string, string>;
  /** Removes the folder. */
  remove(): void;
}

/**
 * An empty home for a run that must not see keys, tokens or marks of earlier runs (what a new machine has). Built
 * tools and downloads are not state: this machine's caches are passed on, so that a run does not fetch and build them
 * again.
 */
export function freshHome(env: NodeJS.ProcessEnv = process.env): FreshHome {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-home-'));
  const config = path.join(dir, '.config');
  const state = path.join(dir, '.local', 'state');
  for (const folder of [config, state]) mkdirSync(folder, { recursive: true });
  return {
    dir,
    env: {
      HOME: dir,
      XDG_CONFIG_HOME: config,
      XDG_STATE_HOME: state,
      TEMPORAL_MCP_CACHE: toolCacheDir(env),
      npm_config_cache: env.npm_config_cache || path.join(os.homedir(), '.npm'),
      PIP_CACHE_DIR: env.PIP_CACHE_DIR || path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'pip'),
      ...goSettings(),
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Where Go keeps its settings and caches on this machine (GOENV, GOPATH, GOCACHE, GOMODCACHE); none without Go. */
function goSettings(): Record<string, string> {
  const names = ['GOENV', 'GOPATH', 'GOCACHE', 'GOMODCACHE'];
  const run = spawnSync('go', ['env', ...names], { encoding: 'utf8' });
  if (run.status !== 0) return {};
  const values = run.stdout.split('\n');
  return Object.fromEntries(names.map((name, index) => [name, values[index]]).filter(([, value]) => value));
}
