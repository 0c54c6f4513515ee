/** Whom an addressed question asks. Plain types, safe in the workflow sandbox; wire names are stored: never rename them. */

/**
 * Who may answer a question addressed to someone other than the task's principal: anyone named in `principals` or
 * holding one of `roles`, except those in `exclude` and, unless `allowRequester`, the task's own principal.
 */
export interface InputAudience {
  principals?: string[];
  roles?: string[];
  exclude?: string[];
  allowRequester?: boolean;
  /**
   * Distinct people whose acceptance closes the question: 1 (any one, the default) or more. "All named" is the number
   * of `principals`, with no `roles`.
   */
  required?: number;
}
