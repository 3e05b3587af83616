/**
 * docs/api.md's table of operations states each authenticated operation's
 * permission (contract section 22); this test holds it to the OpenAPI
 * document's `x-feegate-permission`, which the routes declare.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { openapiDocument } from '../helpers/openapi.js';

const h = useTestApp();

/** `METHOD /path` → the permission the Operations table gives it (`none` or a catalogue permission). */
async function documentedPermissions(): Promise<Map<string, string>> {
  const markdown = await readFile(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const section = markdown.split('\n## Operations\n')[1]!.split('\n## ')[0]!;
  const rows = section.split('\n').filter((line) => line.startsWith('|'));
  const header = rows[0]!.split('|').map((c) => c.trim());
  const column = header.indexOf('permission');
  assert.ok(column > 0, 'the Operations table has a permission column');
  const found = new Map<string, string>();
  for (const row of rows.slice(2)) {
    const cells = row.split('|').map((c) => c.trim());
    const permission = /`([^`]+)`/.exec(cells[column] ?? '')?.[1] ?? cells[column] ?? '';
    for (const [, text] of (cells[1] ?? '').matchAll(/`([^`]+)`/g)) {
      const operation = /^(GET|POST|PUT|PATCH|DELETE) (\/[^\s?]*)/.exec(text!);
      if (operation) found.set(`${operation[1]} ${operation[2]}`, permission);
    }
  }
  return found;
}

describe("docs/api.md's permissions", () => {
  it('give every authenticated operation the permission its route declares', async () => {
    const doc = await openapiDocument(await h.app());
    const documented = await documentedPermissions();
    const wrong: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>))
      for (const [method, op] of Object.entries(methods)) {
        const declared = op['x-feegate-permission'];
        if (declared === undefined) continue;
        const operation = `${method.toUpperCase()} ${path}`;
        const stated = documented.get(operation);
        if (stated !== declared) wrong.push(`${operation}: docs say ${stated ?? 'nothing'}, the route ${declared}`);
      }
    assert.deepEqual(wrong, []);
  });
});
