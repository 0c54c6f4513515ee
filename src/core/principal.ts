/** Who a task belongs to: the principal is a search attribute of the task's workflow. */
import os from 'node:os';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { PRINCIPAL_SEARCH_ATTRIBUTE } from '../contract/task-contract';

/** The search attribute binding a task to its principal. */
export const PRINCIPAL_KEY = defineSearchAttributeKey(PRINCIPAL_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD);

/** Principals are quoted into visibility queries, so they are kept to a safe alphabet. */
const PRINCIPAL_PATTERN = /^[A-Za-z0-9._:@+-]{1,200}$/;

/** Checks that a principal can be stored and queried; throws otherwise. */
export function assertValidPrincipal(principal: string): void {
  if (!PRINCIPAL_PATTERN.test(principal)) {
    throw new Error(`principal "${principal}" must be 1-200 characters of letters, digits and . _ : @ + -`);
  }
}

/** Role names are quoted into visibility queries too: the same alphabet, shorter. */
const ROLE_PATTERN = /^[A-Za-z0-9._:@+-]{1,100}$/;

/** True for a role name that can be stored and queried. */
export function isValidRole(role: unknown): role is string {
  return typeof role === 'string' && ROLE_PATTERN.test(role);
}

/** Parses a comma-separated role list (`MCP_LOCAL_ROLES`, a token file's third column); throws naming a bad role. */
export function parseRoles(text: string | undefined, where: string): string[] {
  const roles = (text ?? '')
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role !== '');
  const bad = roles.find((role) => !isValidRole(role));
  if (bad !== undefined) throw new Error(`${where}: role "${bad}" must be 1-100 characters of letters, digits and . _ : @ + -`);
  return [...new Set(roles)];
}

/** Prefix of every local principal; names with it (and the bare name `local`) are refused for tokens. */
const LOCAL_PRINCIPAL_PREFIX = 'local:';

/**
 * Prefix of every principal an OAuth access token stands for: `oauth:<claim>`. Static tokens and local callers cannot
 * take such names, so a JWT whose subject is "alice" never acts for the static token's "alice".
 */
export const OAUTH_PRINCIPAL_PREFIX = 'oauth:';

/** True for names reserved to local callers or to OAuth tokens: a static token cannot take them. */
export function isReservedPrincipal(principal: string): boolean {
  return principal === 'local' || principal.startsWith(LOCAL_PRINCIPAL_PREFIX) || principal.startsWith(OAUTH_PRINCIPAL_PREFIX);
}

/**
 * The principal of requests that carry no credentials (stdio, HTTP with `--no-auth`): `MCP_LOCAL_PRINCIPAL` when set,
 * else `local:<os user>@<host>`, so two people on one namespace never share tasks by default. Throws for an invalid
 * `MCP_LOCAL_PRINCIPAL`.
 */
export function localPrincipal(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.MCP_LOCAL_PRINCIPAL?.trim();
  if (configured) {
    assertValidPrincipal(configured);
    if (configured.startsWith(OAUTH_PRINCIPAL_PREFIX)) {
      throw new Error(
        `MCP_LOCAL_PRINCIPAL "${configured}" must not start with "${OAUTH_PRINCIPAL_PREFIX}": those names belong to OAuth tokens`,
      );
    }
    return configured;
  }
  let user: string;
  try {
    user = os.userInfo().username;
  } catch {
    user = `uid${process.getuid?.() ?? 'unknown'}`;
  }
  const safe = (text: string) => text.replace(/[^A-Za-z0-9._+-]/g, '_').slice(0, 90) || '_';
  return `${LOCAL_PRINCIPAL_PREFIX}${safe(user)}@${safe(os.hostname())}`;
}
