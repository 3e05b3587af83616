/**
 * The kinds of value a variable of the configuration takes (src/config.ts): how
 * its text becomes its value, refused in a message naming the variable, and how
 * a row of SETTINGS reads it, with its default.
 */
import path from 'node:path';
import proxyAddr from '@fastify/proxy-addr';
import { ConfigError } from './errors.js';

export type Env = Record<string, string | undefined>;

/** How a variable's text becomes its value, and the values it takes in words (the README's "values" column). */
export interface Kind<T> {
  values: string;
  /** `raw` is the variable as set, never blank; a bad value throws ConfigError naming `name`. */
  parse(raw: string, name: string): T;
}

/** One environment variable: a row of SETTINGS. */
export interface Setting<T> {
  env: string;
  values: string;
  /** The default in words: the value as one would set it, (unset), or how it is derived. */
  default: string;
  /** One line; the README's table says more. */
  description: string;
  /** Its value in `env`: the default when unset or blank. */
  read(env: Env): T;
}

/** A variable whose default is computed; `how` says how, in words. */
export function derived<T>(
  env: string,
  kind: Kind<T>,
  how: string,
  value: (vars: Env) => T,
  description: string,
): Setting<T> {
  return {
    env,
    values: kind.values,
    default: how,
    description,
    read: (vars) => (vars[env]?.trim() ? kind.parse(vars[env], env) : value(vars)),
  };
}

/** A variable whose default is written as one would set it, and parsed like it. */
export function setting<T>(env: string, kind: Kind<T>, fallback: string, description: string): Setting<T> {
  return derived(env, kind, fallback, () => kind.parse(fallback, env), description);
}

/** A variable that is off (undefined) unless set. */
export function optional<T>(env: string, kind: Kind<T>, description: string): Setting<T | undefined> {
  return derived<T | undefined>(env, kind, '(unset)', () => undefined, description);
}

export function integer(min: number, max: number): Kind<number> {
  return {
    values: `${min} to ${max}`,
    parse(raw, name) {
      if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
      const value = Number(raw.trim());
      if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
      return value;
    },
  };
}

export const FLAG: Kind<boolean> = {
  values: 'true or false',
  parse(raw, name) {
    const value = raw.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  },
};

export function oneOf(allowed: readonly string[]): Kind<string> {
  return {
    values: allowed.join(', '),
    parse(raw, name) {
      if (!allowed.includes(raw.trim()))
        throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw.trim()}"`);
      return raw.trim();
    },
  };
}

export function text(values: string): Kind<string> {
  return { values, parse: (raw) => raw.trim() };
}

export const DIRECTORY: Kind<string> = { values: 'a directory', parse: (raw) => path.resolve(raw.trim()) };

/** A URL of one of two schemes; `example` shows one in the message of a value that is no URL. */
function url(schemes: [string, string], example: string): Kind<string> {
  const either = `${schemes[0]}:// or ${schemes[1]}://`;
  return {
    values: `a ${either} URL`,
    parse(raw, name) {
      let parsed: URL;
      try {
        parsed = new URL(raw.trim());
      } catch {
        throw new ConfigError(`${name} must be a URL such as ${example}`);
      }
      if (!schemes.includes(parsed.protocol.slice(0, -1)))
        throw new ConfigError(`${name} must start with ${either}, got "${parsed.protocol}//"`);
      return raw.trim();
    },
  };
}

export const POSTGRES_URL = url(['postgres', 'postgresql'], 'postgres://user@host:5432/db');
export const SMTP_URL = url(['smtp', 'smtps'], 'smtp://user:password@mail.example.com:587');

export const REDIS_URL: Kind<string> = {
  values: 'a redis:// or rediss:// URL',
  parse(raw, name) {
    if (!/^rediss?:\/\/[^\s]+$/.test(raw.trim()))
      throw new ConfigError(`${name} must be a URL such as redis://127.0.0.1:6379`);
    return raw.trim();
  },
};

const PROXY_HOPS = integer(0, 20);

/**
 * TRUST_PROXY=true would believe the whole X-Forwarded-For, whose left end the
 * client writes itself: every client could choose its address, and with it its
 * per-address limits. So it takes a number of proxies in front (the client is
 * that many entries from the right) or the proxies' addresses (the client is the
 * first address from the right that is not one of them).
 */
export const PROXIES: Kind<false | number | string[]> = {
  values: `false, ${PROXY_HOPS.values} proxies, or their addresses and CIDR ranges`,
  parse(raw, name) {
    const value = raw.trim();
    if (/^(false|no|off)$/i.test(value)) return false;
    if (/^(true|yes|on)$/i.test(value)) {
      throw new ConfigError(
        `${name}=true is refused: it trusts the client's own X-Forwarded-For, so any client could choose its address; set the number of proxies in front (${name}=1 behind one) or their addresses and CIDR ranges`,
      );
    }
    if (/^\d+$/.test(value)) return PROXY_HOPS.parse(value, name) || false;
    const list = value.split(',').map((entry) => entry.trim());
    try {
      proxyAddr.compile(list);
    } catch (err) {
      throw new ConfigError(
        `${name} must be false, a number of proxies, or a comma-separated list of proxy addresses and CIDR ranges: ${(err as Error).message}`,
      );
    }
    return list;
  },
};

/** FEEGATE_DEMO=true loads the demo data wherever the server listens, false never; unset, only on loopback. */
export const DEMO: Kind<'always' | 'never'> = {
  values: FLAG.values,
  parse: (raw, name) => (FLAG.parse(raw, name) ? 'always' : 'never'),
};

/** WEBHOOK_ALLOWED_HOSTS: host names or host:port, lower-cased, that webhook URLs may name although private. */
export const HOST_LIST: Kind<string[]> = {
  values: 'comma-separated host names or host:port',
  parse(raw, name) {
    const hosts = raw
      .split(',')
      .map((entry) => entry.trim().toLowerCase())
      .filter(Boolean);
    for (const host of hosts) {
      if (!/^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(:\d{1,5})?$/.test(host))
        throw new ConfigError(`${name} must list host names or host:port, got "${host}"`);
    }
    return hosts;
  },
};

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** WEBHOOK_RETRY_SCHEDULE: the waits before each retry, e.g. 5s,5m,30m,2h (milliseconds). */
export const DURATIONS: Kind<number[]> = {
  values: 'comma-separated durations (ms, s, m, h), 1 to 20 of them',
  parse(raw, name) {
    const waits = raw.split(',').map((entry) => {
      const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(entry.trim());
      if (!match) throw new ConfigError(`${name} must list durations such as 5s,5m,2h, got "${entry.trim()}"`);
      return Math.round(Number(match[1]) * DURATION_UNITS[match[2]!]!);
    });
    if (waits.length > 20) throw new ConfigError(`${name} may list at most 20 retries`);
    return waits;
  },
};
