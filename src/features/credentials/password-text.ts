/**
 * Passwords as text (docs/api.md, "Passwords"): normalised with NFKC before
 * they are hashed, checked or measured, so a full-width or composed spelling
 * and its plain look-alike are one password whatever the keyboard typed.
 */
export const normalisePassword = (password: string): string => password.normalize('NFKC');

/**
 * What a stored hash may have been made from: the normalised text, and the raw
 * text where it differs, since hashes made before normalisation (contract
 * section 19) took it as typed. Depends on the password alone, never on the
 * user, so it tells nobody apart.
 */
export function passwordSpellings(password: string): string[] {
  const normalised = normalisePassword(password);
  return normalised === password ? [normalised] : [normalised, password];
}

/** Characters that print nothing: controls, formats (zero-width space, ZWJ, ZWNJ, BOM, soft hyphen), other ignorables. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}]/gu;
const BLANK = /^[\p{White_Space}\p{Z}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]*$/u;

/** Characters of `text` that print something (a space counts: it separates a passphrase's words). */
export const visibleLength = (text: string): number => [...text.replace(INVISIBLE, '')].length;

/** Only spaces and invisible characters. */
export const isBlank = (text: string): boolean => BLANK.test(text);
