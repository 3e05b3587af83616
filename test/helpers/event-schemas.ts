/** Events against the map of events (src/features/events/event-map.ts): each one's data against its type's schema. */
import assert from 'node:assert/strict';
import { EVENT_MAP, type EventType } from '../../src/features/events/event-map.js';
import { WebhookEvent } from '../../src/features/webhooks/webhooks-schemas.js';
import { createStrictAjv } from '../../src/plugins/validation.js';
import { componentSchemas } from '../../src/schemas/common.js';

const ajv = createStrictAjv();
for (const schema of componentSchemas()) ajv.addSchema(schema);

/** Why `data` is not a payload of `type` (Ajv's words), or null when it is one. */
export function eventDataErrors(type: string, data: unknown): string | null {
  if (!Object.hasOwn(EVENT_MAP, type)) return `${type} is not in the map of events`;
  const schema = EVENT_MAP[type as EventType].data;
  const validate = schema.$id ? ajv.getSchema(schema.$id)! : ajv.compile(schema);
  // A copy: the validator lower-cases ids in place.
  return validate(structuredClone(data)) ? null : ajv.errorsText(validate.errors);
}

/** Every event's data matches its type's schema. */
export function assertEventsMatchTheirSchemas(events: ReadonlyArray<{ type: string; data: unknown }>): void {
  assert.ok(events.length > 0, 'there are events to check');
  const wrong = events.flatMap((event) => {
    const errors = eventDataErrors(event.type, event.data);
    return errors ? [`${event.type}: ${errors}`] : [];
  });
  assert.deepEqual(wrong, [], 'each event matches the schema of its type');
}

/** Every delivered body is the envelope (WebhookEvent) with its type's data, as the document's webhooks section says. */
export function assertDeliveredEventsMatch(bodies: readonly string[]): void {
  if (bodies.length === 0) return;
  const envelope = ajv.getSchema(WebhookEvent.$id!)!;
  const events = bodies.map((body) => JSON.parse(body) as { type: string; data: unknown });
  const wrong = events.flatMap((event) =>
    envelope(structuredClone(event)) ? [] : [`${event.type}: ${ajv.errorsText(envelope.errors)}`],
  );
  assert.deepEqual(wrong, [], 'each delivered body is a WebhookEvent');
  assertEventsMatchTheirSchemas(events);
}
