/**
 * How a bridge sets up approvals unless told otherwise, `serve` and `createBridge` alike: decision records signed with
 * the bridge's decision key into the decision store, and who is who from the approvers directory
 * (MCP_APPROVERS_DIRECTORY) and the roles credentials carry.
 */
import type { ApprovalsOptions, PeopleDirectory } from './approvals';
import { defaultPersonOf } from '../contract/approvals';
import { DecisionLog } from './decision-log';
import { ApproversDirectory } from '../records/directory';
import type { ApproverKeyring } from '../records/approver-signatures';

/**
 * Who is who: the person behind a principal and the roles a person holds, by `directory` (none: the default rule) and
 * `credentialRoles` (the roles static tokens give their principals). A hand-over goes to someone whose roles either says.
 */
function peopleOf(
  directory: ApproversDirectory | undefined,
  credentialRoles: (principal: string) => string[] | undefined = () => undefined,
): PeopleDirectory {
  return {
    personOf: (principal) => directory?.personOf(principal) ?? defaultPersonOf(principal),
    rolesOf: (principalOrPerson) => {
      const listed = directory?.person(directory.personOf(principalOrPerson))?.roles;
      const given = credentialRoles(principalOrPerson);
      if (listed === undefined && given === undefined) return undefined;
      return [...new Set([...(listed ?? []), ...(given ?? [])])];
    },
  };
}

/**
 * The approvals options of the environment: MCP_DECISION_SIGNING_KEY, MCP_DECISION_STORE, MCP_APPROVERS_DIRECTORY
 * (see {@link peopleOf}; with the people's own keys and who must sign).
 */
export function approvalsOptionsFromEnv(
  credentialRoles?: (principal: string) => string[] | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Omit<ApprovalsOptions, 'localPrincipal'> {
  return { decisions: DecisionLog.fromEnv(env), ...approversFromEnv(credentialRoles, env) };
}

/**
 * Who is who and who must sign, from one reading of MCP_APPROVERS_DIRECTORY (see {@link peopleOf} and
 * {@link signaturesFromEnv}). Throws `ApproversDirectoryError` naming what to fix in the directory file.
 */
export function approversFromEnv(
  credentialRoles?: (principal: string) => string[] | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Pick<ApprovalsOptions, 'people' | 'signatures'> {
  const directory = ApproversDirectory.fromEnv(env);
  const signatures = directory?.signatures();
  return { people: peopleOf(directory, credentialRoles), ...(signatures && { signatures }) };
}

/**
 * The people's own keys and who must sign, from MCP_APPROVERS_DIRECTORY; undefined when it is unset. Throws
 * `ApproversDirectoryError` naming what to fix in the directory file.
 */
export function signaturesFromEnv(env: NodeJS.ProcessEnv = process.env): ApproverKeyring | undefined {
  return ApproversDirectory.fromEnv(env)?.signatures();
}
