/** The error of decision stores (see `store.ts`). */

/** Thrown when a decision store cannot be read or written, or refuses a record; the message says which store. */
export class DecisionStoreError extends Error {
  constructor(
    message: string,
    /** The store, as its `describe()` says it (no password). */
    readonly store: string,
  ) {
    super(message);
    this.name = 'DecisionStoreError';
  }
}
