/**
 * The map of events (src/features/events/event-map.ts) drives the OpenAPI
 * document's `webhooks` section: every type there with its payload schema, no
 * other. Events written through the API match it (also test/platform/domain-events.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DomainEvent } from '../../src/db/unit-of-work.js';
import { EVENT_MAP, EVENT_TYPES } from '../../src/features/events/event-map.js';
import { eventDataErrors } from '../helpers/event-schemas.js';
import { useTestApp } from '../helpers/app.js';

const h = useTestApp();

// A payload that is not its type's does not compile (npm run typecheck fails here if it did).
// @ts-expect-error USER_CREATED carries a user, not a bare id.
const _wrongPayload: DomainEvent = { type: 'USER_CREATED', customerId: 'c', data: { id: 'u' } };

describe('the map of events', () => {
  it('the document has one webhook per event type, its body the envelope with that type and its data schema', async () => {
    const app = await h.app();
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    assert.deepEqual(Object.keys(doc.webhooks), EVENT_TYPES);
    for (const type of EVENT_TYPES) {
      const schema = doc.webhooks[type].post.requestBody.content['application/json'].schema;
      assert.deepEqual(schema.allOf[0], { $ref: '#/components/schemas/WebhookEvent' }, type);
      assert.deepEqual(schema.allOf[1].properties.type, { const: type }, type);
      const data = EVENT_MAP[type].data;
      const expected = data.$id ? { $ref: `#/components/schemas/${data.$id}` } : JSON.parse(JSON.stringify(data));
      assert.deepEqual(schema.allOf[1].properties.data, expected, type);
      if (data.$id) assert.ok(doc.components.schemas[data.$id], `${type}: its component is in the document`);
    }
  });

  it('tells a payload that is not its type’s, and a type it does not know', () => {
    assert.equal(
      eventDataErrors('WEBHOOK_TEST', { webhook_id: '5b7e1f0a-8c2d-4e3f-9a1b-6c4d2e8f0a17', message: 'hi' }),
      null,
    );
    assert.match(eventDataErrors('WEBHOOK_TEST', { webhook_id: 'x' }) ?? '', /message|webhook_id/);
    assert.match(eventDataErrors('USER_CREATED', { id: 'x' }) ?? '', /required/);
    assert.match(eventDataErrors('NO_SUCH_EVENT', {}) ?? '', /not in the map/);
  });
});
