/**
 * Values from an OpenAPI schema for tests that walk the document: a valid one,
 * and every value at and one past each limit it states, each marked valid or not
 * (test/platform/openapi-constraints.test.ts).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { resolve, type Schema } from './openapi.js';

export const OMIT = Symbol('omit');
export type Key = string | number;

export interface Variant {
  /** Where the value goes: body path, or a parameter's name. */
  path: Key[];
  value: unknown;
  valid: boolean;
  why: string;
  /** The `page.size` the answer must report (a size past `x-clamp-maximum`). */
  servedAs?: number;
}

/** The field as the server names it in `errors` (src/plugins/problem-details.ts). */
export function fieldName(path: Key[]): string {
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('') || 'body';
}

export const matches = (pattern: string, value: string) => new RegExp(pattern, 'u').test(value);

/** A value the schema admits, from what the document says. */
export function sample(doc: Schema, raw: Schema): unknown {
  const schema = resolve(doc, raw);
  if (schema.examples?.[0] !== undefined) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf) return sample(doc, schema.anyOf[0]);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      if (schema.format === 'uuid') return randomUUID();
      if (schema.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
      if (schema.format === 'email') return 'someone@example.com';
      if (schema.pattern && !matches(schema.pattern, 'a'))
        throw new Error(`document an example for a string with pattern ${schema.pattern}`);
      return 'a'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => sample(doc, schema.items ?? {}));
    case 'object':
      return Object.fromEntries(
        (schema.required ?? []).map((name: string) => [name, sample(doc, schema.properties[name])]),
      );
    default:
      return 'a';
  }
}

/** A month ahead, to the second: an instant that must lie ahead (a scheduled change's effective_at) takes it too. */
const SOON = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 19);

/**
 * Values each format admits (RFC 5321, RFC 3339, RFC 9562), in forms a careless
 * validator might refuse. An instant is the field's own example written
 * otherwise when it has one (a range's end must stay after its start), else soon.
 */
function formatSamples(format: string, base: unknown): string[] {
  const at = typeof base === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(base) ? base.slice(0, 19) : SOON;
  const samples: Record<string, string[]> = {
    email: ['ops@localhost', 'first.last+tag@example.co.uk', 'USER@EXAMPLE.COM'],
    'date-time': [`${at}Z`, `${at}.123456+05:30`, `${at.replace('T', 't')}z`],
    uuid: ['0E6F1A2B-3C4D-4E5F-8A9B-0C1D2E3F4A5B', '0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b'],
  };
  return samples[format] ?? [];
}

/** A string of `length` characters from `base`: cut, or padded with its last character. */
function ofLength(base: unknown, length: number): string {
  const text = typeof base === 'string' && base.length > 0 ? base : 'a';
  return text.length >= length ? text.slice(0, length) : text + text.at(-1)!.repeat(length - text.length);
}

/** Every value at the limits the schema states, relative to a valid `base`. */
export function variants(doc: Schema, raw: Schema, base: unknown, path: Key[], inBody: boolean): Variant[] {
  const schema = resolve(doc, raw);
  const out: Variant[] = [];
  const add = (value: unknown, valid: boolean, why: string, at: Key[] = path, servedAs?: number) =>
    out.push({ path: at, value, valid, why, servedAs });
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.includes('null')) add(null, true, 'null is admitted');
  const allowed: unknown[] | undefined =
    schema.enum ??
    (schema.anyOf?.every((b: Schema) => b.const !== undefined) ? schema.anyOf.map((b: Schema) => b.const) : undefined);
  if (allowed) {
    for (const value of allowed) add(value, true, `enum value ${String(value)}`);
    add(`${String(allowed[0])}_NOT_LISTED`, false, 'a value outside the enum');
    return out;
  }
  const type = types.find((t) => t !== 'null');
  if (type === 'string') {
    if (schema.minLength !== undefined) {
      add(ofLength(base, schema.minLength), true, `minLength ${schema.minLength}`);
      if (schema.minLength > 0)
        add(ofLength(base, schema.minLength - 1), false, `minLength ${schema.minLength}, one under`);
    }
    if (schema.maxLength !== undefined) {
      add(ofLength(base, schema.maxLength), true, `maxLength ${schema.maxLength}`);
      add(ofLength(base, schema.maxLength + 1), false, `maxLength ${schema.maxLength}, one over`);
    }
    // What the format admits, unless a pattern says otherwise: `ops@localhost` is an e-mail address to format:email.
    const admitted = formatSamples(schema.format, base).filter(
      (value) => !schema.pattern || matches(schema.pattern, value),
    );
    for (const value of admitted) add(value, true, `format ${schema.format}`);
    if (schema.pattern) {
      const bad = ['x\u0000', 'not valid!', '\ud800'].find((candidate) => !matches(schema.pattern, candidate));
      assert.ok(bad !== undefined, `a value outside ${schema.pattern}`);
      add(bad, false, `pattern ${schema.pattern}`);
    }
    if (inBody) add(42, false, 'a number where a string belongs');
  } else if (type === 'integer' || type === 'number') {
    if (schema.minimum !== undefined) {
      add(schema.minimum, true, `minimum ${schema.minimum}`);
      add(schema.minimum - 1, false, `minimum ${schema.minimum}, one under`);
    }
    if (schema.maximum !== undefined) {
      add(schema.maximum, true, `maximum ${schema.maximum}`);
      add(schema.maximum + 1, false, `maximum ${schema.maximum}, one over`);
    }
    const clamp: unknown = schema['x-clamp-maximum'];
    if (typeof clamp === 'number') {
      add(clamp, true, `x-clamp-maximum ${clamp}`, path, clamp);
      add(clamp + 1, true, `x-clamp-maximum ${clamp}, one over: served as ${clamp}`, path, clamp);
      add(clamp * 10, true, `x-clamp-maximum ${clamp}, ten times over: served as ${clamp}`, path, clamp);
    }
    if (type === 'integer') add((schema.minimum ?? 0) + 0.5, false, 'a fraction where an integer belongs');
  } else if (type === 'boolean') {
    add(inBody ? 'true' : 'yes', false, 'not a boolean');
  } else if (type === 'array') {
    const items = Array.isArray(base) && base.length > 0 ? base : [sample(doc, schema.items ?? {})];
    const item = resolve(doc, schema.items ?? {});
    // Ids must differ where duplicates would be folded together; other items repeat the first.
    const arrayOf = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        item.format === 'uuid' ? (items[i] ?? randomUUID()) : items[i % items.length],
      );
    if (schema.minItems !== undefined) {
      add(arrayOf(schema.minItems), true, `minItems ${schema.minItems}`);
      if (schema.minItems > 0) add(arrayOf(schema.minItems - 1), false, `minItems ${schema.minItems}, one under`);
    }
    if (schema.maxItems !== undefined) {
      add(arrayOf(schema.maxItems), true, `maxItems ${schema.maxItems}`);
      add(arrayOf(schema.maxItems + 1), false, `maxItems ${schema.maxItems}, one over`);
    }
    if (schema.items) out.push(...variants(doc, schema.items, items[0], [...path, 0], inBody));
  } else if (type === 'object') {
    const value = (base ?? {}) as Record<string, unknown>;
    for (const name of Object.keys(schema.properties ?? {})) {
      const required = (schema.required ?? []).includes(name);
      add(OMIT, !required, `${required ? 'required' : 'optional'} ${name}, left out`, [...path, name]);
    }
    if (schema.additionalProperties === false)
      add(1, false, 'a field the schema does not name', [...path, 'unexpected_field']);
    if (schema.minProperties !== undefined && schema.minProperties > 0)
      add({}, false, `minProperties ${schema.minProperties}`);
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
      out.push(...variants(doc, property, value[name] ?? sample(doc, property), [...path, name], inBody));
    }
  }
  return out;
}

/** `base` with `value` at `path` (or without it: OMIT); `base` is not changed. */
export function setAt(base: unknown, path: Key[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [Key, ...Key[]];
  const copy: any = Array.isArray(base) ? [...base] : { ...(base as object) };
  const next = setAt(copy[head] ?? (typeof rest[0] === 'number' ? [] : {}), rest, value);
  if (next === OMIT) delete copy[head];
  else copy[head] = next;
  return copy;
}
