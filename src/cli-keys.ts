/** `feegate keys …`: API keys issued, listed and revoked by the operator. */
import { Type } from '@sinclair/typebox';
import { type CommandTable, options, usageLine, validate, withDatabase } from './cli-kit.js';
import { UsageError } from './errors.js';
import { CreateApiKeyBody } from './features/api-keys/api-keys-schemas.js';
import { OPERATOR_CONTEXT } from './lib/change-context.js';
import { Uuid } from './schemas/common.js';

async function keysIssueCommand(args: string[]): Promise<number> {
  const { values } = options(KEYS_COMMANDS, 'keys issue', args, {
    user: { type: 'string' },
    customer: { type: 'string' },
    merchant: { type: 'string' },
  });
  if (!values.user || !values.customer)
    throw new UsageError(`--user and --customer are required; ${usageLine(KEYS_COMMANDS, 'keys issue')}`);
  const body = {
    user: values.user,
    customer_id: values.customer,
    ...(values.merchant === undefined ? {} : { merchant_id: values.merchant }),
  };
  validate(CreateApiKeyBody, body, { user: '--user', customer_id: '--customer', merchant_id: '--merchant' });
  const record = await withDatabase(({ services }) =>
    services.apiKeys.issueByOperator(
      { email: body.user, customerId: body.customer_id, merchantId: body.merchant_id ?? null },
      OPERATOR_CONTEXT,
    ),
  );
  console.log(`API key ${record.id} for ${record.user} (${record.user_type}); shown once, store it now:`);
  console.log(record.api_key);
  return 0;
}

const KeyOwnerIds = Type.Object({ customer_id: Uuid, merchant_id: Type.Optional(Uuid) });
const KeyId = Type.Object({ id: Uuid });

async function keysListCommand(args: string[]): Promise<number> {
  const { values } = options(KEYS_COMMANDS, 'keys list', args, {
    customer: { type: 'string' },
    merchant: { type: 'string' },
  });
  if (!values.customer) throw new UsageError(`--customer is required; ${usageLine(KEYS_COMMANDS, 'keys list')}`);
  const ids = {
    customer_id: values.customer,
    ...(values.merchant === undefined ? {} : { merchant_id: values.merchant }),
  };
  validate(KeyOwnerIds, ids, { customer_id: '--customer', merchant_id: '--merchant' });
  const records = await withDatabase(({ services }) =>
    services.apiKeys.listByOperator(ids.customer_id.toLowerCase(), ids.merchant_id?.toLowerCase() ?? null),
  );
  console.log(['id', 'key', 'user', 'status', 'access', 'expires_at', 'name'].join('\t'));
  for (const k of records)
    console.log([k.id, k.api_key, k.user, k.status, k.access, k.expires_at ?? '-', k.name ?? '-'].join('\t'));
  console.log(`${records.length} key(s)`);
  return 0;
}

async function keysRevokeCommand(args: string[]): Promise<number> {
  const { positionals } = options(KEYS_COMMANDS, 'keys revoke', args, {}, 1);
  if (!positionals[0]) throw new UsageError(`the key's id is required; ${usageLine(KEYS_COMMANDS, 'keys revoke')}`);
  validate(KeyId, { id: positionals[0] }, { id: '<id>' });
  const id = positionals[0].toLowerCase();
  await withDatabase(({ services }) => services.apiKeys.remove(null, id, OPERATOR_CONTEXT));
  console.log(`API key ${id} revoked`);
  return 0;
}

export const KEYS_COMMANDS: CommandTable = {
  'keys issue': {
    args: '--user <email> --customer <uuid> [--merchant <uuid>]',
    summary: 'issue an API key; prints the full key once',
    run: keysIssueCommand,
  },
  'keys list': {
    args: '--customer <uuid> [--merchant <uuid>]',
    summary: "list a customer's (or one merchant's) keys, every status, masked",
    run: keysListCommand,
  },
  'keys revoke': {
    args: '<id>',
    summary: 'revoke (delete) an API key: refused by every running instance within milliseconds, never later than 5 s',
    run: keysRevokeCommand,
  },
};
