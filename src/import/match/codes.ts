// The `_error_code`s reconcile gives rows it does not send (CONTRACT §7b).

/** a row whose key an earlier row of the file has: the earlier line is in its message */
export const DUPLICATE_KEY = 'DUPLICATE_KEY';
/** a row with an empty cell in a --match field */
export const MISSING_KEY = 'MISSING_KEY';
/** `--match id`: a row naming an id no record has (the server gives ids: it cannot be created under it) */
export const NOT_FOUND = 'NOT_FOUND';
