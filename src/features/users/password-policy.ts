/**
 * The password rule (docs/api.md, "Passwords"): 12 to 256 characters of any
 * kind, not a common password and not the e-mail. Guessability is zxcvbn's
 * judgement over its common-password and common-word dictionaries
 * (@zxcvbn-ts/language-common), a well-kept list rather than one of our own.
 */
import type { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { BadRequestError } from '../../errors.js';

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;
/** zxcvbn's score 3: "safely unguessable", about 10^8 guesses and more. */
const MIN_SCORE = 3;

let factory: Promise<ZxcvbnFactory> | undefined;
/**
 * Loaded and built on first use: the dictionaries hold about 15 MB and take a
 * moment to index, and most processes never check a password (docs/performance.md, peak RSS).
 */
const zxcvbn = () =>
  (factory ??= Promise.all([import('@zxcvbn-ts/core'), import('@zxcvbn-ts/language-common')]).then(
    ([{ ZxcvbnFactory }, { dictionary, adjacencyGraphs }]) =>
      new ZxcvbnFactory({ dictionary, graphs: adjacencyGraphs }),
  ));

const weak = (reason: string) =>
  new BadRequestError('weak_password', `The new password ${reason}.`, [{ field: '/new_password', message: reason }]);

/** Refuses a password that breaks the rule with 400 weak_password and the reason. */
export async function assertStrongPassword(password: string, email: string): Promise<void> {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    throw weak(`must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters long`);
  }
  const lower = password.toLowerCase();
  const local = email.split('@')[0] ?? '';
  if (lower.includes(email.toLowerCase()) || (local.length >= 4 && lower.includes(local.toLowerCase()))) {
    throw weak('must not contain the e-mail');
  }
  const result = (await zxcvbn()).check(password, [email, local]);
  const common = result.sequence.some(
    (match) =>
      match.pattern === 'dictionary' && match.dictionaryName === 'passwords' && match.token.length * 2 >= length,
  );
  if (common) throw weak('is in a list of common passwords');
  if (result.score < MIN_SCORE) throw weak('is too easy to guess: use more words or characters');
}
