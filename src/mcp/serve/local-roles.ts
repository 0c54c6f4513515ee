/**
 * Which roles `serve` gives to callers without credentials (MCP_LOCAL_ROLES), and what it says about it at start.
 * Over stdio the caller is whoever spawned the server. Over HTTP a caller without credentials is anyone who reaches
 * the port (on loopback, every user and process of the machine), so the roles go to them only when asked for with
 * `--local-roles-over-http`, and then the server says loudly what it grants to whom.
 */
import { parseRoles } from '../../core';
import { UsageError } from './args';

/** What `serve` was started as, as far as the local roles go. */
export interface LocalRolesSetting {
  /** MCP_LOCAL_ROLES as set (comma-separated), if at all. */
  env: string | undefined;
  /** The HTTP endpoint when serving HTTP; undefined for stdio. */
  http?: { url: string; noAuth: boolean; authenticated: boolean };
  /** `--local-roles-over-http`. */
  overHttp: boolean;
  /** The principal of callers without credentials. */
  principal: string;
}

/** The roles callers without credentials get, and the lines the server logs at start about them. */
export interface LocalRolesDecision {
  roles: string[];
  warnings: string[];
}

/**
 * Decides the roles of callers without credentials (see the module's comment). Throws {@link UsageError} for
 * `--local-roles-over-http` on an endpoint where every request must authenticate (there are no such callers), and a
 * plain Error naming a malformed role.
 */
export function localRolesFor(setting: LocalRolesSetting): LocalRolesDecision {
  const roles = parseRoles(setting.env, 'MCP_LOCAL_ROLES');
  const { http, principal } = setting;
  if (!http) return { roles, warnings: [] };
  if (http.authenticated) {
    if (setting.overHttp) {
      throw new UsageError('--local-roles-over-http has no effect here: every HTTP request needs a token; leave it out');
    }
    return {
      roles: [],
      warnings:
        roles.length > 0 ? ['serve: MCP_LOCAL_ROLES is ignored: every HTTP request authenticates and gets the roles of its token'] : [],
    };
  }
  if (roles.length === 0) return { roles, warnings: [] };
  const who = http.noAuth
    ? `EVERY caller that reaches ${http.url} (--no-auth: anyone on the network who can connect)`
    : `EVERY process and user of this machine that connects to ${http.url}`;
  if (setting.overHttp) {
    return {
      roles,
      warnings: [
        `serve: WARNING: --local-roles-over-http: ${who} acts as ${principal} with the role(s) ${roles.join(', ')}, ` +
          'and may answer every question addressed to them. Give people tokens with roles instead (MCP_AUTH_TOKENS_FILE)',
      ],
    };
  }
  return {
    roles: [],
    warnings: [
      `serve: MCP_LOCAL_ROLES (${roles.join(', ')}) is ignored over HTTP: it would give those roles to ${who}. ` +
        'It applies to stdio; to grant them over HTTP anyway, pass --local-roles-over-http',
    ],
  };
}
