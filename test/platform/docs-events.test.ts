/**
 * docs/design.md lists the domain events written today; the list is
 * EVENT_TYPES, so a new event type fails here until the design names it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EVENT_TYPES } from '../../src/features/events/event-map.js';
import { read } from '../helpers/repository-text.js';

/** The backticked upper-case names of the design's passage on the events written today. */
function eventsNamed(design: string): string[] {
  const start = design.indexOf('Events written today:');
  const end = design.indexOf('The list is', start);
  assert.ok(start >= 0 && end > start, 'docs/design.md has its passage on the events written today');
  return [...new Set([...design.slice(start, end).matchAll(/`([A-Z][A-Z_]+)`/g)].map((m) => m[1]!))].sort();
}

describe('the events docs/design.md names', () => {
  it('are EVENT_TYPES, every one of them and no other', () => {
    assert.deepEqual(eventsNamed(read('docs/design.md')), [...EVENT_TYPES].sort());
  });

  it('tells a type the passage leaves out', () => {
    const named = eventsNamed('Events written today: `API_KEY_CREATED`, `USER_CREATED`. The list is');
    assert.deepEqual(named, ['API_KEY_CREATED', 'USER_CREATED']);
    assert.notDeepEqual(named, [...EVENT_TYPES].sort());
  });
});
