/**
 * Every instance learns at once of what another changed in token auth: a
 * revoked login (logout, refresh-token reuse) and a rotated signing key. The
 * changing transaction sends NOTIFY (delivered on commit); one LISTEN
 * connection per instance receives both.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/database.js';

const CHANNEL = 'feegate_auth_changed';

/** Statement to run inside the transaction that revokes a login. */
export function sessionRevokedNotice(sessionId: string): SQL {
  return sql`SELECT pg_notify(${CHANNEL}, ${`session ${sessionId}`})`;
}

/** Statement to run inside the transaction that rotates the signing key. */
export function signingKeysNotice(): SQL {
  return sql`SELECT pg_notify(${CHANNEL}, 'keys')`;
}

export interface AuthChangeHandlers {
  sessionRevoked(sessionId: string): void;
  signingKeysChanged(): void;
  /** false while pushed messages may be missed. */
  connectedChanged(connected: boolean): void;
}

export async function listenForAuthChanges(database: Database, handlers: AuthChangeHandlers): Promise<() => Promise<void>> {
  return database.listen(CHANNEL, {
    onMessage: (payload) => {
      const [kind, id] = payload.split(' ');
      if (kind === 'session' && id) handlers.sessionRevoked(id);
      else if (kind === 'keys') handlers.signingKeysChanged();
    },
    onConnectedChange: handlers.connectedChanged,
  });
}
