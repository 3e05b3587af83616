/**
 * The password rule (docs/api.md, "Passwords"): 12 to 256 characters of any
 * kind after NFKC normalisation, not only spaces or invisible characters, not a
 * common password and not the e-mail. Guessability is zxcvbn's judgement over
 * its common-password and common-word dictionaries (@zxcvbn-ts/language-common),
 * a well-kept list rather than one of our own, made in a worker thread
 * (password-strength.ts) on the first 100 characters only: its matching grows
 * faster than the length (a few hundred milliseconds at 100), and 100
 * characters that pass are plenty.
 */
import { BadRequestError } from '../../errors.js';
import { isBlank, normalisePassword, visibleLength } from './password-text.js';
import { measureStrength } from './password-strength.js';

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;
/** zxcvbn's score 3: "safely unguessable", about 10^8 guesses and more. */
const MIN_SCORE = 3;
/** The most characters zxcvbn is given: up to a few hundred milliseconds of its worker's time. */
export const MEASURED_LENGTH = 100;

const weak = (reason: string) =>
  new BadRequestError('weak_password', `The new password ${reason}.`, [{ field: '/new_password', message: reason }]);

/** Refuses a password that breaks the rule with 400 weak_password and the reason. */
export async function assertStrongPassword(password: string, email: string): Promise<void> {
  const text = normalisePassword(password);
  if (isBlank(text)) throw weak('must not be only spaces or invisible characters');
  // Invisible characters add nothing anybody could see or type: they do not count toward the minimum.
  const length = [...text].length;
  if (visibleLength(text) < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    throw weak(`must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters long`);
  }
  const lower = text.toLowerCase();
  const local = email.split('@')[0] ?? '';
  if (lower.includes(email.toLowerCase()) || (local.length >= 4 && lower.includes(local.toLowerCase()))) {
    throw weak('must not contain the e-mail');
  }
  const measured = [...text].slice(0, MEASURED_LENGTH).join('');
  const { score, commonLength } = await measureStrength(measured, [email, local]);
  if (commonLength * 2 >= Math.min(length, MEASURED_LENGTH)) throw weak('is in a list of common passwords');
  if (score < MIN_SCORE) throw weak('is too easy to guess: use more words or characters');
}
