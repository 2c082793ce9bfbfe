// Commands crm prints for the user to run next (resume, import the rejects, the next page). They
// carry the flags that chose where this run went (--profile, --base-url, --v1-base-url): without
// them a pasted command goes to the default profile's server, another CRM than the one just used.
import type { GlobalOptions } from '../context.js';

/** A word as one shell word (sh, bash, zsh, fish), so the printed command can be pasted as it is. */
export function shellWord(p: string): string {
  return /^[\w@%+:,./-][\w@%+=:,./-]*$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`;
}

/** `crm [--profile P] [--base-url U] [--v1-base-url V] WORDS…`, shell-quoted. */
export function crmCommand(
  globals: Pick<GlobalOptions, 'profile' | 'baseUrl' | 'v1BaseUrl'>,
  words: readonly string[],
): string {
  const target = [
    ...(globals.profile ? ['--profile', globals.profile] : []),
    ...(globals.baseUrl ? ['--base-url', globals.baseUrl] : []),
    ...(globals.v1BaseUrl ? ['--v1-base-url', globals.v1BaseUrl] : []),
  ];
  return ['crm', ...target, ...words].map(shellWord).join(' ');
}
