/** The operator's `users create`, `users reset-password` and `users list`. */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runFeegate, useCliDatabase } from '../helpers/cli.js';

const cli = useCliDatabase('feegate-users-cli-');
const feegate = (...args: string[]) => runFeegate(args, cli.env);
const CUSTOMER = 'c1000000-0000-4000-8000-000000000001';

describe('feegate users', () => {
  it('creates a login user with a temporary password printed once, resets it and lists the users', async () => {
    const file = path.join(cli.dir, 'customer.json');
    await writeFile(file, JSON.stringify({ customers: [{ id: CUSTOMER, name: 'Alpha' }] }));
    assert.equal((await feegate('import', file)).code, 0);

    const created = await feegate(
      'users',
      'create',
      '--customer',
      CUSTOMER.toUpperCase(),
      '--email',
      'Ops@Alpha.test',
      '--role',
      'VIEWER',
    );
    assert.equal(created.code, 0, created.stderr);
    const [line, password] = created.stdout.trim().split('\n');
    assert.match(line!, /^login user [0-9a-f-]{36} ops@alpha\.test \(VIEWER\); temporary password, shown once:$/);
    assert.match(password!, /^[A-Za-z0-9_-]{20}$/);

    const again = await feegate('users', 'create', '--customer', CUSTOMER, '--email', 'ops@alpha.test');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /user_conflict/);
    const badRole = await feegate(
      'users',
      'create',
      '--customer',
      CUSTOMER,
      '--email',
      'x@alpha.test',
      '--role',
      'OWNER',
    );
    assert.equal(badRole.code, 1);
    assert.match(badRole.stderr, /--role "OWNER" is not valid/);

    const reset = await feegate('users', 'reset-password', '--email', 'ops@alpha.test');
    assert.equal(reset.code, 0, reset.stderr);
    const newPassword = reset.stdout.trim().split('\n')[1];
    assert.ok(newPassword && newPassword !== password);
    const unknown = await feegate('users', 'reset-password', '--email', 'nobody@alpha.test');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /user_not_found/);

    const listed = await feegate('users', 'list', '--customer', CUSTOMER);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /ops@alpha\.test\tLOGIN\tVIEWER\tFORCE_CHANGE_PASSWORD\tfalse/);
    assert.match(listed.stdout, /1 user\(s\)\n$/);
    assert.ok(!listed.stdout.includes(newPassword!));
  });
});
