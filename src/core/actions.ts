/** The actions a task's workflow offers people: what a request for one says, and what became of it. */

/**
 * An action a task's workflow offers a person (an Update of its own): the bridge seals who asked, for which run and
 * what for into the Update's argument (`sealed`, `proof`, beside the subject's fields), and the workflow takes it only
 * through `checkSealedAction(argument, update, subject)`.
 */
export interface TaskAction {
  /** The Update's name. */
  update: string;
  /** The Update's own arguments: its argument's other fields, and what the seal binds the request to. */
  subject: Record<string, string | number | boolean>;
  /** Put before the Update id, to name the action in Temporal's history; default `<update>/`. */
  updateIdPrefix?: string;
}

/**
 * What became of an action: `applied` with the Update's result; `refused` by the workflow (its validator or handler)
 * with its reason; or `closed`: the run had ended, with what it returned if it completed (the action may have been
 * its last step, and a repeated request finds its effect there).
 */
export type ActionOutcome<Result> =
  { kind: 'applied'; result: Result } | { kind: 'refused'; reason: string } | { kind: 'closed'; result?: unknown };
