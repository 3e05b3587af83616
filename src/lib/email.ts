/**
 * An e-mail address as users are stored and looked up by it: the user name of
 * a login, a key's owner, the import's users. One spelling, so that `Ann@x.io `
 * and `ann@x.io` never name two users nor miss one another.
 */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}
