/**
 * The cache of built tools (the Temporal CLI and server, MCP Inspector, Python environments) that temporal-dev.sh, the
 * suite and the scripts share, and the environment of a first run: a home folder with nothing from earlier runs in it,
 * where only that cache is linked in.
 */
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
  /** `HOME`, `XDG_CONFIG_HOME` and `XDG_STATE_HOME` in the empty folder; `TEMPORAL_MCP_CACHE` and npm's cache kept. */
  env: Record<string, string>;
  /** Removes the folder. */
  remove(): void;
}

/**
 * An empty home for a run that must not see keys, tokens or marks of earlier runs (what a new machine has). Built
 * tools are not state: the cache of this machine is passed on (`TEMPORAL_MCP_CACHE`), and so is npm's download cache.
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
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
