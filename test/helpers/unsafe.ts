// The tests' oracle of "unsafe on a terminal", written independently of src/output/sanitize.ts:
// C0, DEL, C1, bidi controls (U+061C, U+200E/F, U+202A–E, U+2066–9), line and paragraph separators.
const CLASS = '\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';

/** any unsafe character */
export const RAW_UNSAFE = new RegExp(`[\\u0000-\\u001f${CLASS}]`);

/** any unsafe character but a line feed or carriage return (text meant for a terminal, several lines) */
export const RAW_UNSAFE_BUT_LINES = new RegExp(`[\\u0000-\\u0009\\u000b\\u000c\\u000e-\\u001f${CLASS}]`);
