/**
 * The service bundle's build refuses a module that is not ASCII: V8 holds a
 * module's whole source as two bytes a character once one character is beyond
 * ASCII (scripts/service-bundle.mjs), which doubled the bundle's heap.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { assertAscii } from '../../scripts/service-bundle.mjs';

const dir = mkdtempSync(path.join(os.tmpdir(), 'feegate-bundle-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const at = path.join(dir, name);
  writeFileSync(at, text);
  return at;
}

describe('the service bundle', () => {
  it('is accepted when every module is ASCII, control characters included', () => {
    assert.doesNotThrow(() => assertAscii([file('plain.mjs', 'const a = "\\u2026";\n\t// tab\r\n\f\n')]));
  });

  it('is refused naming the module, the line and the text around a character beyond ASCII, near the start too', () => {
    const plain = file('first.mjs', 'export const a = 1;\n');
    const early = file('early.mjs', '// …\n');
    const late = file('late.mjs', 'const a = 1;\n// the key ring: enc:v1:<kid>:… of the JWK\n');
    assert.throws(() => assertAscii([plain, early]), {
      message: `${early}:1 is not ASCII ("// …\\n"): V8 would hold the whole module as two bytes a character; write it in ASCII`,
    });
    assert.throws(
      () => assertAscii([late]),
      (err: Error) => {
        assert.match(err.message, /late\.mjs:2 is not ASCII \(".*enc:v1:<kid>:… of the JWK\\n"\)/);
        return true;
      },
    );
  });

  it('is refused for a character outside the Basic Multilingual Plane', () => {
    assert.throws(() => assertAscii([file('emoji.mjs', 'const a = "😀";\n')]), /emoji\.mjs:1 is not ASCII/);
  });
});
