/** The texts of the mails feegate sends: plain text, the secret on a line of its own. */
import type { Mail } from './mail-dal.js';

export function temporaryPasswordMail(recipient: string, password: string): Mail {
  return {
    recipient,
    subject: 'Your feegate back-office access',
    body: `A feegate back-office login was set up for ${recipient}.\n\nTemporary password (you choose your own at the first login):\n\n${password}\n`,
  };
}

export function forgotPasswordMail(recipient: string, code: string): Mail {
  return {
    recipient,
    subject: 'Your feegate password reset code',
    body: `Somebody asked to reset the feegate password of ${recipient}. If it was not you, ignore this message.\n\nCode (good for 15 minutes):\n\n${code}\n`,
  };
}

/** A notice of an ADMIN's reset, with the temporary password it set. */
export function passwordResetMail(recipient: string, password: string): Mail {
  return {
    recipient,
    subject: 'Your feegate password was reset',
    body: `An administrator reset the feegate back-office password of ${recipient}; your sessions were ended and two-factor codes turned off. If you did not expect this, tell your administrator.\n\nTemporary password (you choose your own at the next login):\n\n${password}\n`,
  };
}
