/**
 * Every instance learns at once of what another changed in token auth: a
 * revoked login (logout, refresh-token reuse), a rotated signing key, a user
 * name the operator unlocked, and a customer's require_mfa. The changing transaction sends NOTIFY (delivered
 * on commit); one LISTEN connection per instance receives them all.
 */
import type { Database } from '../../db/database.js';
import type { Notice } from '../../db/unit-of-work.js';

const CHANNEL = 'feegate_auth_changed';

/** The notice of the unit of work that revokes logins: one payload each. */
export function sessionsRevokedNotice(sessionIds: readonly string[]): Notice {
  return { channel: CHANNEL, payload: sessionIds.map((id) => `session ${id}`) };
}

/** Tells every instance to forget its failed-login counts of a user name. */
export function loginUnlockedNotice(name: string): Notice {
  return { channel: CHANNEL, payload: `unlock ${name}` };
}

/** A customer now requires (or no longer requires) a one-time code of every login. */
export function mfaRequirementNotice(customerId: string, required: boolean): Notice {
  return { channel: CHANNEL, payload: `mfa ${customerId} ${required ? 'on' : 'off'}` };
}

/** The notice of the unit of work that rotates the signing key. */
export function signingKeysNotice(): Notice {
  return { channel: CHANNEL, payload: 'keys' };
}

export interface AuthChangeHandlers {
  sessionRevoked(sessionId: string): void;
  signingKeysChanged(): void;
  /** The operator cleared a user name's failed-login counts. */
  loginUnlocked(name: string): void;
  mfaRequirementChanged(customerId: string, required: boolean): void;
  /** false while pushed messages may be missed. */
  connectedChanged(connected: boolean): void;
}

export async function listenForAuthChanges(
  database: Database,
  handlers: AuthChangeHandlers,
): Promise<() => Promise<void>> {
  return database.listen(CHANNEL, {
    onMessage: (payload) => {
      // A user name may contain spaces: everything after the first one is the subject.
      const space = payload.indexOf(' ');
      const kind = space === -1 ? payload : payload.slice(0, space);
      const subject = space === -1 ? '' : payload.slice(space + 1);
      if (kind === 'session' && subject) handlers.sessionRevoked(subject);
      else if (kind === 'keys') handlers.signingKeysChanged();
      else if (kind === 'unlock' && subject) handlers.loginUnlocked(subject);
      else if (kind === 'mfa') {
        const [customerId, state] = subject.split(' ');
        if (customerId && (state === 'on' || state === 'off'))
          handlers.mfaRequirementChanged(customerId, state === 'on');
      }
    },
    onConnectedChange: handlers.connectedChanged,
  });
}
