/** The error of decision stores (see `store.ts`). */

/** Thrown when a decision store cannot be read or written, or refuses a record; the message says which store. */
export class DecisionStoreError extends Error {
  constructor(
    message: string,
    /** The store, as its `location()` says it (no password). */
    readonly store: string,
  ) {
    super(message);
    this.name = 'DecisionStoreError';
  }
}

/**
 * Thrown when what the store holds in a record's place is not a record (a link, a pipe, a folder, a file too large or
 * damaged): that task's chain is broken, whatever a retry does; the store and every other task are fine.
 */
export class DamagedRecordError extends DecisionStoreError {
  constructor(message: string, store: string) {
    super(message, store);
    this.name = 'DamagedRecordError';
  }
}
