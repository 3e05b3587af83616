/**
 * Every instance learns at once of what another changed in token auth: a
 * revoked login (logout, refresh-token reuse), a rotated signing key, and a user
 * name the operator unlocked. The changing transaction sends NOTIFY (delivered
 * on commit); one LISTEN connection per instance receives them all.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/database.js';

const CHANNEL = 'feegate_auth_changed';

/** Statement to run inside the transaction that revokes a login. */
export function sessionRevokedNotice(sessionId: string): SQL {
  return sql`SELECT pg_notify(${CHANNEL}, ${`session ${sessionId}`})`;
}

/** One notice per login, in one statement: the ids are one text[] parameter (toUuidArray). */
export function sessionsRevokedNotice(sessionIds: string): SQL {
  return sql`SELECT pg_notify(${CHANNEL}, 'session ' || id) FROM unnest(${sessionIds}::uuid[]) AS id`;
}

/** Statement that tells every instance to forget its failed-login counts of a user name. */
export function loginUnlockedNotice(name: string): SQL {
  return sql`SELECT pg_notify(${CHANNEL}, ${`unlock ${name}`})`;
}

/** Statement to run inside the transaction that rotates the signing key. */
export function signingKeysNotice(): SQL {
  return sql`SELECT pg_notify(${CHANNEL}, 'keys')`;
}

export interface AuthChangeHandlers {
  sessionRevoked(sessionId: string): void;
  signingKeysChanged(): void;
  /** The operator cleared a user name's failed-login counts. */
  loginUnlocked(name: string): void;
  /** false while pushed messages may be missed. */
  connectedChanged(connected: boolean): void;
}

export async function listenForAuthChanges(database: Database, handlers: AuthChangeHandlers): Promise<() => Promise<void>> {
  return database.listen(CHANNEL, {
    onMessage: (payload) => {
      // A user name may contain spaces: everything after the first one is the subject.
      const space = payload.indexOf(' ');
      const kind = space === -1 ? payload : payload.slice(0, space);
      const subject = space === -1 ? '' : payload.slice(space + 1);
      if (kind === 'session' && subject) handlers.sessionRevoked(subject);
      else if (kind === 'keys') handlers.signingKeysChanged();
      else if (kind === 'unlock' && subject) handlers.loginUnlocked(subject);
    },
    onConnectedChange: handlers.connectedChanged,
  });
}
