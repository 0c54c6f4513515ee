/**
 * How `serve` sets up approvals: decision records signed with the bridge's decision key into the decision store, and
 * who is who from the approvers directory (MCP_APPROVERS_DIRECTORY) and the static tokens' roles.
 */
import type { ApprovalsOptions, PeopleDirectory } from '../../approvals/approvals';
import { defaultPersonOf } from '../../approvals/contract';
import { DecisionLog } from '../../approvals/decision-log';
import { ApproversDirectory } from '../../approvals/directory';
import type { BearerTokens } from '../transports/auth';

/**
 * The approvals options of the environment: MCP_DECISION_SIGNING_KEY, MCP_DECISION_STORE, MCP_APPROVERS_DIRECTORY.
 * A hand-over goes to someone whose roles the directory or a static token says.
 */
export function approvalsOptionsFromEnv(
  tokens: BearerTokens | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Omit<ApprovalsOptions, 'localPrincipal'> {
  const directory = ApproversDirectory.fromEnv(env);
  const people: PeopleDirectory = {
    personOf: (principal) => directory?.personOf(principal) ?? defaultPersonOf(principal),
    rolesOf: (principalOrPerson) => {
      const listed = directory?.person(directory.personOf(principalOrPerson))?.roles;
      const tokenRoles = tokens?.rolesOf(principalOrPerson);
      if (listed === undefined && tokenRoles === undefined) return undefined;
      return [...new Set([...(listed ?? []), ...(tokenRoles ?? [])])];
    },
  };
  return { decisions: DecisionLog.fromEnv(env), people };
}
