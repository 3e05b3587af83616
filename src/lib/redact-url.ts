/**
 * What a log line shows of a request's URL: never a secret. A key sent as
 * `?api_key=` (or a token pasted into a path) would otherwise sit in every log
 * store the lines reach. Query values of parameters named like a secret, and any
 * part that looks like an API key, a refresh token or a JWT, become [redacted];
 * the rest stays as sent, so the line still says which route was asked for.
 */
export const REDACTED = '[redacted]';

/** Parameter names whose values are secrets: api_key, access_token, password, client_secret, code… */
const SECRET_NAME = /key|token|password|secret|code/i;
/** An API key or refresh token of this service (fgk_…, fgr_…), or a JWT (its header starts with `{"`, base64url `eyJ`). */
const SECRET_VALUE = /fg[kr]_[0-9A-Za-z_-]{8}|eyJ[0-9A-Za-z_-]*\.[0-9A-Za-z_-]+/;

/** Percent-decoded, so an encoded secret is recognised too; undecodable text is looked at as it is. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}

const looksSecret = (text: string) => SECRET_VALUE.test(decoded(text));

function redactParameter(parameter: string): string {
  const eq = parameter.indexOf('=');
  const name = eq === -1 ? parameter : parameter.slice(0, eq);
  if (looksSecret(name)) return REDACTED;
  if (eq === -1) return parameter;
  return SECRET_NAME.test(decoded(name)) || looksSecret(parameter.slice(eq + 1)) ? `${name}=${REDACTED}` : parameter;
}

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = (q === -1 ? url : url.slice(0, q))
    .split('/')
    .map((segment) => (looksSecret(segment) ? REDACTED : segment))
    .join('/');
  return q === -1
    ? path
    : `${path}?${url
        .slice(q + 1)
        .split('&')
        .map(redactParameter)
        .join('&')}`;
}
