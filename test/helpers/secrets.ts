/** The tests' key ring as the data layer uses it: to read or write stored secrets beside a running app. */
import { keyRingOf, testConfig } from '../../src/config.js';
import { SILENT_LOG } from '../../src/lib/log.js';
import { createSealedValues } from '../../src/lib/sealed-values.js';

export function testSealedValues() {
  return createSealedValues(keyRingOf(testConfig()), SILENT_LOG);
}
