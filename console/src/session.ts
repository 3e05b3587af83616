/**
 * The signed-in session: the access token in memory only, the refresh token in
 * sessionStorage (gone with the tab), renewed before the access token's `exp`
 * (a JWT, docs/access-tokens.md).
 */
import { decodeJwt } from 'jose';
import type { Schemas } from '../../clients/typescript/index';
import { client, setAccessToken, unwrap } from './api';

export type TokenSet = Schemas['TokenResponse']['token'];
export type Role = 'ADMIN' | 'MEMBER' | 'VIEWER';

const REFRESH_KEY = 'feegate.console.refresh';
let renewTimer: number | undefined;
let role: Role = 'VIEWER';

/** The role the access token carries: what the console offers (the service decides in the end). */
export function currentRole(): Role {
  return role;
}

/** Epoch milliseconds at which the access token expires; throws when it is not a JWT with an `exp`. */
function expiryOf(token: TokenSet): number {
  const { exp } = decodeJwt(token.access_token);
  if (exp === undefined) throw new Error('The access token has no exp claim.');
  return exp * 1000;
}

/** Renew a minute early, or at 80% of the lifetime for short-lived tokens. */
function renewDelay(expiresAt: number, now = Date.now()): number {
  const left = expiresAt - now;
  return Math.max(1000, Math.min(left - 60_000, left * 0.8));
}

export function startSession(token: TokenSet, onExpired: () => void): void {
  const expiresAt = expiryOf(token);
  role = (decodeJwt(token.access_token).role as Role | undefined) ?? 'VIEWER';
  setAccessToken(token.access_token);
  sessionStorage.setItem(REFRESH_KEY, token.refresh_token);
  window.clearTimeout(renewTimer);
  renewTimer = window.setTimeout(() => void renew(onExpired), renewDelay(expiresAt));
}

async function renew(onExpired: () => void): Promise<void> {
  const refresh_token = sessionStorage.getItem(REFRESH_KEY);
  if (!refresh_token) return onExpired();
  try {
    const { token } = await unwrap(client.POST('/v1/login/refresh', { body: { refresh_token } }));
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
    const { token } = await unwrap(client.POST('/v1/login/refresh', { body: { refresh_token } }));
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
