/**
 * The platform's CreateUserRequest (`{ user_type, attributes: { email,
 * customer_id, name? } }`, contract section 20) read as feegate's own request
 * for a new login user; feegate's shape passes through unchanged.
 */
import { NotFoundError, ValidationError } from '../../errors.js';
import type { Principal, Role } from '../../lib/principal.js';
import type { CreateUserRequest } from './users-schemas.js';

export interface NewLoginUser {
  email: string;
  name?: string | undefined;
  description?: string | undefined;
  role?: Role | undefined;
}

export function readCreateUser(caller: Principal, body: CreateUserRequest): NewLoginUser {
  const { user_type: userType, attributes, ...own } = body;
  if (userType === 'MERCHANT')
    throw new ValidationError([
      {
        field: 'user_type',
        message: 'must be CUSTOMER: merchant users act through API keys (POST /v1/api-keys with merchant_id)',
      },
    ]);
  if (attributes === undefined) {
    if (own.email === undefined)
      throw new ValidationError([{ field: 'email', message: "is required (or the platform's attributes.email)" }]);
    return { ...own, email: own.email };
  }
  if (own.email !== undefined || own.name !== undefined)
    throw new ValidationError(
      ['email', 'name']
        .filter((field) => field in own)
        .map((field) => ({ field, message: `is sent as attributes.${field} in the platform's shape, not beside it` })),
    );
  if (attributes.customer_id !== caller.customerId) throw new NotFoundError('customer_not_found');
  return { ...own, email: attributes.email, name: attributes.name };
}
