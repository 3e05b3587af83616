/**
 * The signed-in session: the access token in memory only, the refresh token in
 * sessionStorage (gone with the tab), renewed before the access token expires.
 * The expiry is the JWT's `exp` when the token is a JWT, else `expires_in`.
 */
import { client, setAccessToken, unwrap } from './api';

export interface TokenSet {
  access_token: string;
  expires_in: number;
  refresh_token: string;
}

const REFRESH_KEY = 'feegate.console.refresh';
let renewTimer: number | undefined;

/** Epoch milliseconds at which the access token expires. */
export function expiryOf(token: TokenSet, now = Date.now()): number {
  const payload = token.access_token.split('.')[1];
  if (payload) {
    try {
      const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: unknown };
      if (typeof claims.exp === 'number') return claims.exp * 1000;
    } catch {
      // Not a JWT (opaque token): fall back to expires_in.
    }
  }
  return now + token.expires_in * 1000;
}

/** Renew a minute early, or at 80% of the lifetime for short-lived tokens. */
export function renewDelay(expiresAt: number, now = Date.now()): number {
  const left = expiresAt - now;
  return Math.max(1000, Math.min(left - 60_000, left * 0.8));
}

export function startSession(token: TokenSet, onExpired: () => void): void {
  setAccessToken(token.access_token);
  sessionStorage.setItem(REFRESH_KEY, token.refresh_token);
  window.clearTimeout(renewTimer);
  renewTimer = window.setTimeout(() => void renew(onExpired), renewDelay(expiryOf(token)));
}

async function renew(onExpired: () => void): Promise<void> {
  const refresh_token = sessionStorage.getItem(REFRESH_KEY);
  if (!refresh_token) return onExpired();
  try {
    const { token } = await unwrap<{ token: TokenSet }>(client.POST('/v1/login/refresh', { body: { refresh_token } }));
    startSession(token, onExpired);
  } catch {
    endSession();
    onExpired();
  }
}

/** After a reload the access token is gone; the refresh token (if any) gets a new one. */
export async function resumeSession(onExpired: () => void): Promise<boolean> {
  const refresh_token = sessionStorage.getItem(REFRESH_KEY);
  if (!refresh_token) return false;
  try {
    const { token } = await unwrap<{ token: TokenSet }>(client.POST('/v1/login/refresh', { body: { refresh_token } }));
    startSession(token, onExpired);
    return true;
  } catch {
    endSession();
    return false;
  }
}

export function endSession(): void {
  window.clearTimeout(renewTimer);
  setAccessToken(undefined);
  sessionStorage.removeItem(REFRESH_KEY);
}

export async function signOut(): Promise<void> {
  try {
    await unwrap(client.POST('/v1/logout'));
  } catch {
    // The session ends here either way.
  }
  endSession();
}
